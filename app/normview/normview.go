// Package normview is the Norm tab: a patient's scan against the normative cohort it was run
// with (hubscope-helper run --norm, or the app's normative folder): how many cohort hubs it
// lost and gained, and a table of the hubs lost, the hubs gained and the clusters of |z| > 2 of
// degree, each with its MNI position, atlas region and z; a tapped row moves the crosshair
// there. The z-maps themselves (z_degree, z_<map>) are overlays of the Slices tab, drawn in the
// diverging colour scale with a |z| slider.
package normview

import (
	"cmp"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"math"
	"slices"
	"strconv"

	"fyne.io/fyne/v2"
	"fyne.io/fyne/v2/container"
	"fyne.io/fyne/v2/widget"
	"github.com/hubscope/hubscope/app/sorttable"
	"github.com/hubscope/hubscope/ipc"
	"github.com/hubscope/hubscope/ipc/schema"
)

// Bundle files and volumes of a normative comparison (helper/pipeline, writeNorm).
const (
	NormFile      = schema.NormFile
	VolumeZDegree = "z_degree"
	VolumeLost    = "hubs_lost"
	VolumeGained  = "hubs_gained"
	// VolumeCohortHubs is the normative cohort's own hubs at the scan's nodes.
	VolumeCohortHubs = "cohort_hubs"
	// MaxRows bounds the table: a large lesion can take thousands of cohort hub voxels with it.
	MaxRows = 500
)

// Kinds of rows.
const (
	KindLost         = "hub lost"
	KindGained       = "hub gained"
	KindClusterBelow = "cluster below"
	KindClusterAbove = "cluster above"
)

// Report is norm.json (schema.NormComparison), which the tab shows.
type Report struct{ schema.NormComparison }

// Cluster is one cluster of |z| > z_cut of degree (norm.json).
type Cluster = schema.NormCluster

// Row is one line of the table.
type Row struct {
	Kind   string
	Voxel  [3]int
	MNI    [3]float64
	InMNI  bool // MNI holds MNI coordinates (the scan is in MNI space or registered), else scan mm
	Region string
	Z      float64 // degree z against the cohort (NaN: not compared)
	Voxels int     // a cluster's size (1 for a hub)
}

// Has says whether a job's bundle holds a normative comparison.
func Has(s ipc.Summary) bool {
	return slices.Contains(s.Volumes, VolumeLost) && slices.Contains(s.Volumes, VolumeZDegree) &&
		normFile(s) != ""
}

// Position returns voxel v's MNI coordinates when the scan is in MNI space (an atlas is served)
// or registered (ScanToMNI), else its scan coordinates.
func Position(s ipc.Summary, affine [4][4]float64, v [3]int) ([3]float64, bool) {
	x := apply(affine, [3]float64{float64(v[0]), float64(v[1]), float64(v[2])})
	if s.ScanToMNI != nil {
		return apply(*s.ScanToMNI, x), true
	}
	return x, s.Atlas != nil
}

func apply(a [4][4]float64, x [3]float64) [3]float64 {
	var y [3]float64
	for r := range 3 {
		y[r] = a[r][0]*x[0] + a[r][1]*x[1] + a[r][2]*x[2] + a[r][3]
	}
	return y
}

// Rows builds the table: hubs lost (most negative z first), then hubs gained (largest z first),
// at most MaxRows of them, then the clusters (largest first). atlas may be nil.
func Rows(s ipc.Summary, rep *Report, lost, gained, z, atlas *ipc.Volume) []Row {
	region := func(v [3]int) string {
		if atlas == nil || s.Atlas == nil {
			return ""
		}
		l := int(math.Round(float64(atlas.At(v[0], v[1], v[2]))))
		if name, ok := s.Atlas.Labels[l]; ok && l > 0 {
			return name
		}
		return "outside the atlas"
	}
	zAt := func(v [3]int) float64 {
		if z == nil {
			return math.NaN()
		}
		return float64(z.At(v[0], v[1], v[2]))
	}
	var rows []Row
	if rep != nil {
		for _, c := range rep.Clusters {
			kind := KindClusterBelow
			if c.Sign > 0 {
				kind = KindClusterAbove
			}
			r := Row{Kind: kind, Voxel: c.Peak, Z: c.PeakZ, Voxels: c.Voxels, Region: c.Region}
			r.MNI, r.InMNI = Position(s, lost.Header.Affine, c.Peak)
			if rg := region(c.Peak); rg != "" {
				r.Region = rg
			}
			rows = append(rows, r)
		}
	}
	slices.SortStableFunc(rows, func(a, b Row) int { return cmp.Compare(b.Voxels, a.Voxels) })
	var hubs []Row
	for _, layer := range []struct {
		vol  *ipc.Volume
		kind string
	}{{lost, KindLost}, {gained, KindGained}} {
		if layer.vol == nil {
			continue
		}
		d := layer.vol.Header.Dims
		for k := range d[2] {
			for j := range d[1] {
				for i := range d[0] {
					v := [3]int{i, j, k}
					if !(layer.vol.At(i, j, k) >= 0.5) {
						continue // 0, or NaN outside the mask
					}
					r := Row{Kind: layer.kind, Voxel: v, Z: zAt(v), Voxels: 1, Region: region(v)}
					r.MNI, r.InMNI = Position(s, layer.vol.Header.Affine, v)
					hubs = append(hubs, r)
				}
			}
		}
	}
	// Lost hubs first, most negative z first; then gained, largest z first.
	slices.SortStableFunc(hubs, func(a, b Row) int {
		if a.Kind != b.Kind {
			return cmp.Compare(kindOrder(a.Kind), kindOrder(b.Kind))
		}
		if a.Kind == KindLost {
			return cmp.Compare(a.Z, b.Z)
		}
		return cmp.Compare(b.Z, a.Z)
	})
	if len(hubs) > MaxRows {
		hubs = hubs[:MaxRows]
	}
	return append(hubs, rows...)
}

// Marked lists the voxels of a label volume that are set (≥ 0.5; NaN outside the mask is not).
func Marked(v *ipc.Volume) [][3]int {
	var out [][3]int
	d := v.Header.Dims
	for k := range d[2] {
		for j := range d[1] {
			for i := range d[0] {
				if v.At(i, j, k) >= 0.5 {
					out = append(out, [3]int{i, j, k})
				}
			}
		}
	}
	return out
}

func kindOrder(k string) int {
	if k == KindLost {
		return 0
	}
	return 1
}

// Titles of the table's columns.
var Titles = []string{"Finding", "z (degree)", "x mm", "y mm", "z mm", "Region", "Voxels"}

var widths = []float32{120, 90, 55, 55, 55, 190, 65}

// Cells are a row's texts, in Titles' order.
func (r Row) Cells() []string {
	z := "—"
	if !math.IsNaN(r.Z) {
		z = strconv.FormatFloat(r.Z, 'f', 2, 64)
	}
	region := r.Region
	if region == "" {
		region = "—"
	}
	return []string{r.Kind, z, fmt.Sprintf("%.0f", r.MNI[0]), fmt.Sprintf("%.0f", r.MNI[1]), fmt.Sprintf("%.0f", r.MNI[2]), region, strconv.Itoa(r.Voxels)}
}

// Lines are the comparison's counts in words.
func (rep *Report) Lines(hubRows int) []string {
	out := []string{
		fmt.Sprintf("%d nodes compared with the normative cohort (z of each nodal measure against the cohort's mean and SD).", rep.Compared),
		fmt.Sprintf("Hubs lost: %d of the cohort's %d hubs have a degree z below -%g.", rep.LostCount, rep.CohortHubs, rep.ZCut),
		fmt.Sprintf("Hubs gained: %d hubs of this scan are no cohort hub and have a degree z above %g.", rep.GainedCount, rep.ZCut),
		fmt.Sprintf("Clusters of |z| > %g (degree): %d.", rep.ZCut, len(rep.Clusters)),
	}
	if n := rep.LostCount + rep.GainedCount; n > hubRows {
		out = append(out, fmt.Sprintf("The table lists the first %d of the %d hubs lost or gained.", hubRows, n))
	}
	return out
}

// Service is what the tab fetches through (a *slices.VolumeCache in the app).
type Service interface {
	Volume(ctx context.Context, id, name string) (*ipc.Volume, error)
	OpenFile(ctx context.Context, id, name string) (io.ReadCloser, ipc.FileInfo, error)
}

// Tab is the Norm tab of one job.
type Tab struct {
	widget.BaseWidget
	Summary *widget.Label
	Table   *sorttable.Table
	// ShowZ shows the degree z-map in the Slices tab (OnShowZ).
	ShowZ *widget.Button
	// OnSelect is called (on the UI goroutine) with the voxel of a tapped row; OnShowZ when
	// ShowZ is pressed.
	OnSelect func(voxel [3]int)
	OnShowZ  func()
	// OnLoaded is called on the UI goroutine once the rows are shown.
	OnLoaded func()
	// Report and Rows are set once loaded; Affine is the grid's voxel → scan world map.
	Report *Report
	Rows   []Row
	Affine [4][4]float64
	// CohortHubs are the voxels of the cohort's own hubs (cohort_hubs; none for a bundle
	// without it).
	CohortHubs [][3]int

	content fyne.CanvasObject
	loaded  chan struct{}
}

// NewTab builds the tab and fetches, once after is closed, norm.json and the hubs lost and
// gained, z_degree and atlas volumes of job s through svc.
func NewTab(ctx context.Context, svc Service, s ipc.Summary, after <-chan struct{}) *Tab {
	t := &Tab{Summary: widget.NewLabel("Loading the comparison with the normative cohort…"), loaded: make(chan struct{})}
	t.Summary.Wrapping = fyne.TextWrapWord
	t.Table = sorttable.New(Titles, widths)
	t.Table.OnSelect = func(i int) {
		if i < len(t.Rows) && t.OnSelect != nil {
			t.OnSelect(t.Rows[i].Voxel)
		}
	}
	t.ShowZ = widget.NewButton("Show the degree z-map in the slices", func() {
		if t.OnShowZ != nil {
			t.OnShowZ()
		}
	})
	note := widget.NewLabel("Tap a row to put the crosshair on it. Coordinates are MNI when the scan is in MNI space or registered to it, else the scan's own. In the 3D view, hubs lost are drawn cyan, hubs gained magenta and the cohort's own hubs as small white spheres beside this scan's hubs.")
	note.Wrapping = fyne.TextWrapWord
	note.Importance = widget.LowImportance
	top := container.NewVBox(t.Summary, container.NewHBox(t.ShowZ), note)
	t.content = container.NewBorder(top, nil, nil, nil, t.Table)
	t.ExtendBaseWidget(t)
	go t.load(ctx, svc, s, after)
	return t
}

// Loaded is closed once the tab shows what it could fetch.
func (t *Tab) Loaded() <-chan struct{} { return t.loaded }

func (t *Tab) CreateRenderer() fyne.WidgetRenderer { return widget.NewSimpleRenderer(t.content) }

func (t *Tab) load(ctx context.Context, svc Service, s ipc.Summary, after <-chan struct{}) {
	defer close(t.loaded)
	select {
	case <-after:
	case <-ctx.Done():
		return
	}
	id := s.Job.ID
	rep, err := readReport(ctx, svc, s)
	var lost, gained, z, atlas *ipc.Volume
	if err == nil {
		lost, err = svc.Volume(ctx, id, VolumeLost)
	}
	if err == nil && slices.Contains(s.Volumes, VolumeGained) {
		gained, err = svc.Volume(ctx, id, VolumeGained)
	}
	if err == nil {
		z, err = svc.Volume(ctx, id, VolumeZDegree)
	}
	var cohortHubs [][3]int
	if err == nil && slices.Contains(s.Volumes, VolumeCohortHubs) {
		var ch *ipc.Volume
		if ch, err = svc.Volume(ctx, id, VolumeCohortHubs); err == nil {
			cohortHubs = Marked(ch)
		}
	}
	if err == nil && s.Atlas != nil && slices.Contains(s.Volumes, "atlas") {
		atlas, _ = svc.Volume(ctx, id, "atlas") // without it the rows just have no region
	}
	var rows []Row
	if err == nil {
		rows = Rows(s, rep, lost, gained, z, atlas)
	}
	if ctx.Err() != nil {
		return
	}
	fyne.DoAndWait(func() {
		if err != nil {
			t.Summary.SetText("The comparison with the normative cohort could not be read: " + err.Error())
			return
		}
		t.Report, t.Rows, t.Affine, t.CohortHubs = rep, rows, lost.Header.Affine, cohortHubs
		hubRows := 0
		cells := make([][]string, len(rows))
		for i, r := range rows {
			cells[i] = r.Cells()
			if r.Kind == KindLost || r.Kind == KindGained {
				hubRows++
			}
		}
		lines := rep.Lines(hubRows)
		text := lines[0]
		for _, l := range lines[1:] {
			text += "\n" + l
		}
		t.Summary.SetText(text)
		t.Table.SetRows(cells)
		t.content.(*fyne.Container).Refresh()
		if t.OnLoaded != nil {
			t.OnLoaded()
		}
	})
}

func readReport(ctx context.Context, svc Service, s ipc.Summary) (*Report, error) {
	name := normFile(s)
	rc, _, err := svc.OpenFile(ctx, s.Job.ID, name)
	if err != nil {
		return nil, err
	}
	defer rc.Close()
	var rep Report
	if err := json.NewDecoder(io.LimitReader(rc, 64<<20)).Decode(&rep.NormComparison); err != nil {
		return nil, fmt.Errorf("%s: %w", name, err)
	}
	return &rep, nil
}

// normFile is the bundle's comparison file: NormFile, or norm.json in a bundle written
// before the rename (schema.NormFileIn).
func normFile(s ipc.Summary) string {
	names := make([]string, len(s.Files))
	for i, f := range s.Files {
		names[i] = f.Name
	}
	return schema.NormFileIn(names)
}
