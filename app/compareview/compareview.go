// Package compareview shows a two-group comparison (hubscope-helper compare) that the helper
// serves as a job (its folder opened with JobRequest.Open; the summary's Comparison says what
// was compared): the t-map of a nodal measure over the anatomy of one compared run in the
// slice viewer — the diverging colour scale (first group higher red, lower blue), the |t|
// threshold starting at the false discovery rate's cut — and the nodes significant at that
// rate with their t, q, MNI position and atlas region; a tapped row moves the crosshair there.
// The maps are the helper's (t_<map>, q_<map>); nothing is tested here.
package compareview

import (
	"cmp"
	"context"
	"fmt"
	"math"
	"path/filepath"
	"slices"
	"strconv"
	"strings"

	"fyne.io/fyne/v2"
	"fyne.io/fyne/v2/container"
	"fyne.io/fyne/v2/widget"

	"github.com/hubscope/hubscope/app/normview"
	sl "github.com/hubscope/hubscope/app/slices"
	"github.com/hubscope/hubscope/app/sorttable"
	"github.com/hubscope/hubscope/ipc"
)

// MaxRows bounds the table (a large effect can make thousands of voxels significant).
const MaxRows = 500

// Row is one significant node.
type Row struct {
	Voxel  [3]int
	T, Q   float64
	MNI    [3]float64
	InMNI  bool // MNI holds MNI coordinates, else the scan's own (see normview.Position)
	Region string
}

// Titles of the table's columns.
var Titles = []string{"t", "q (FDR)", "x mm", "y mm", "z mm", "Region"}

var widths = []float32{60, 70, 45, 45, 45, 170}

// Cells are a row's texts, in Titles' order.
func (r Row) Cells() []string {
	region := r.Region
	if region == "" {
		region = "—"
	}
	return []string{strconv.FormatFloat(r.T, 'f', 2, 64), strconv.FormatFloat(r.Q, 'g', 3, 64),
		fmt.Sprintf("%.0f", r.MNI[0]), fmt.Sprintf("%.0f", r.MNI[1]), fmt.Sprintf("%.0f", r.MNI[2]), region}
}

// Rows lists the nodes with q ≤ alpha (finite t and q), smallest q first, then largest |t|;
// atlas may be nil. The second result is how many there are in all (the rows stop at MaxRows).
func Rows(s ipc.Summary, t, q, atlas *ipc.Volume, alpha float64) ([]Row, int) {
	var rows []Row
	d := t.Header.Dims
	for k := range d[2] {
		for j := range d[1] {
			for i := range d[0] {
				tv, qv := float64(t.At(i, j, k)), float64(q.At(i, j, k))
				if math.IsNaN(tv) || math.IsNaN(qv) || qv > alpha {
					continue
				}
				r := Row{Voxel: [3]int{i, j, k}, T: tv, Q: qv}
				r.MNI, r.InMNI = normview.Position(s, t.Header.Affine, r.Voxel)
				if atlas != nil && s.Atlas != nil {
					l := int(math.Round(float64(atlas.At(i, j, k))))
					if name, ok := s.Atlas.Labels[l]; ok && l > 0 {
						r.Region = name
					} else {
						r.Region = "outside the atlas"
					}
				}
				rows = append(rows, r)
			}
		}
	}
	slices.SortStableFunc(rows, func(a, b Row) int {
		if c := cmp.Compare(a.Q, b.Q); c != 0 {
			return c
		}
		return cmp.Compare(math.Abs(b.T), math.Abs(a.T))
	})
	n := len(rows)
	if n > MaxRows {
		rows = rows[:MaxRows]
	}
	return rows, n
}

// Cut is the smallest |t| among the rows (the threshold at which exactly the significant
// nodes show), or 0 without rows.
func Cut(rows []Row) float64 {
	c := math.Inf(1)
	for _, r := range rows {
		c = min(c, math.Abs(r.T))
	}
	if math.IsInf(c, 1) {
		return 0
	}
	return c
}

// Volume names of a compared map.
func TName(m string) string { return "t_" + m }
func QName(m string) string { return "q_" + m }

// Has says whether a job is a two-group comparison with maps to show.
func Has(s ipc.Summary) bool {
	return s.Comparison != nil && len(s.Comparison.Maps) > 0 && slices.Contains(s.Volumes, TName(s.Comparison.Maps[0])) &&
		slices.Contains(s.Volumes, QName(s.Comparison.Maps[0]))
}

// viewerSummary is the job's summary as the slice viewer gets it: the anatomy, the atlas and
// the t-maps only (the reference run's own maps and hubs are not the comparison's).
func viewerSummary(s ipc.Summary) ipc.Summary {
	v := s
	v.Hubs, v.DFC, v.Volumes = nil, nil, nil
	for _, n := range s.Volumes {
		if n == sl.VolumeTemplate || n == sl.VolumeMean || n == sl.VolumeMask || n == "atlas" || strings.HasPrefix(n, "t_") {
			v.Volumes = append(v.Volumes, n)
		}
	}
	return v
}

// View is a comparison on show. Its methods are for the UI goroutine.
type View struct {
	widget.BaseWidget
	Summary ipc.Summary
	Header  *widget.Label
	Viewer  *sl.Viewer
	Table   *sorttable.Table
	// Map picks the compared map shown (degree, …).
	Map *widget.Select
	// Rows are the significant nodes of the map shown, Total how many there are in all, Cut
	// the |t| threshold the map was shown at; set once loaded.
	Rows  []Row
	Total int
	Cut   float64
	// OnLoaded is called on the UI goroutine each time a map's rows and slices are shown (err:
	// what kept them from it).
	OnLoaded func(err error)

	// Q picks the false discovery rate at which nodes are listed and the |t| threshold is set
	// (the comparison's own, or another: the q-maps hold every node's q).
	Q *widget.Select

	svc     *sl.VolumeCache
	ctx     context.Context
	cancel  context.CancelFunc
	content fyne.CanvasObject
	quiet   bool // set while Start selects the first map
	// The map shown, its t, q and the atlas volumes, and the rate the rows are listed at.
	shown       string
	t, q, atlas *ipc.Volume
	alpha       float64
}

// qChoices are the rates offered: conventional ones and the comparison's own.
func qChoices(own float64) []string {
	rates := []float64{0.001, 0.01, 0.05, 0.1}
	if !slices.Contains(rates, own) && own > 0 {
		rates = append(rates, own)
		slices.Sort(rates)
	}
	out := make([]string, len(rates))
	for i, r := range rates {
		out[i] = strconv.FormatFloat(r, 'g', -1, 64)
	}
	return out
}

// New builds the view of comparison job s (Start loads it). svc is the helper.
func New(ctx context.Context, svc ipc.Service, s ipc.Summary) *View {
	cache, ok := svc.(*sl.VolumeCache)
	if !ok {
		cache = sl.NewVolumeCache(svc, 0)
	}
	v := &View{Summary: s, svc: cache, Header: widget.NewLabel(""), Viewer: sl.New(cache), Table: sorttable.New(Titles, widths)}
	v.ctx, v.cancel = context.WithCancel(ctx)
	v.Header.Wrapping = fyne.TextWrapWord
	v.Viewer.SetControlColumns(2)
	v.Table.OnSelect = func(i int) {
		if i < len(v.Rows) {
			v.Viewer.SetCrosshair(v.Rows[i].Voxel)
		}
	}
	maps := s.Comparison.Maps
	v.Map = widget.NewSelect(maps, func(m string) {
		if !v.quiet {
			v.show(m)
		}
	})
	v.alpha = s.Comparison.Alpha
	v.Q = widget.NewSelect(qChoices(v.alpha), func(q string) {
		if a, err := strconv.ParseFloat(q, 64); err == nil && !v.quiet {
			v.SetAlpha(a)
		}
	})
	v.quiet = true
	v.Q.SetSelected(strconv.FormatFloat(v.alpha, 'g', -1, 64))
	v.quiet = false
	// The run's bundle by its folder's name only: a whole path is one long word, which a
	// label wrapped by words cannot break.
	note := widget.NewLabel("Tap a row to put the crosshair on it. Coordinates are MNI when the runs are in MNI space or registered to it, else the scan's own. The slices are drawn on the anatomy of one compared run, " + filepath.Base(s.Bundle) + ".")
	note.Wrapping = fyne.TextWrapWord
	note.Importance = widget.LowImportance
	top := container.NewVBox(v.Header, container.NewHBox(widget.NewLabel("Map"), v.Map, widget.NewLabel("Nodes at FDR q <="), v.Q))
	list := container.NewBorder(note, nil, nil, nil, v.Table)
	split := container.NewHSplit(v.Viewer, list)
	split.Offset = 0.62
	v.content = container.NewBorder(top, nil, nil, nil, split)
	v.ExtendBaseWidget(v)
	return v
}

// Start loads the first map; call it once the view is on show (its widgets are then updated
// from the fetching goroutines, one update at a time).
func (v *View) Start() {
	m := v.Summary.Comparison.Maps[0]
	v.quiet = true
	v.Map.SetSelected(m)
	v.quiet = false
	v.show(m) // last: Fyne's test driver applies its updates on the fetching goroutine
}

func (v *View) CreateRenderer() fyne.WidgetRenderer { return widget.NewSimpleRenderer(v.content) }

// Close stops what the view still fetches.
func (v *View) Close() { v.cancel() }

// header says what was compared, in words.
func (v *View) header(m string) string {
	c := v.Summary.Comparison
	text := fmt.Sprintf("Two groups compared: %s = %s (%d runs) against %s (%d runs), Welch's t of %s at each of %d nodes; red: %s higher, blue: %s lower.",
		c.GroupColumn, c.Groups[0], c.N[0], c.Groups[1], c.N[1], m, c.Nodes, c.Groups[0], c.Groups[0])
	if len(c.Covariates) > 0 {
		text += " Covariates regressed out first: " + strings.Join(c.Covariates, ", ") + "."
	}
	switch {
	case v.Total == 0:
		text += fmt.Sprintf("\nNo node is significant at a false discovery rate q <= %g (Benjamini-Hochberg); the slices show every |t| above 0.", v.alpha)
	case v.Total > len(v.Rows):
		text += fmt.Sprintf("\n%d nodes are significant at q <= %g (Benjamini-Hochberg), the slices show |t| >= %.2f; the table lists the first %d.", v.Total, v.alpha, v.Cut, len(v.Rows))
	case v.Total == 1:
		text += fmt.Sprintf("\n1 node is significant at q <= %g (Benjamini-Hochberg); the slices show |t| >= %.2f, its |t|.", v.alpha, v.Cut)
	default:
		text += fmt.Sprintf("\n%d nodes are significant at q <= %g (Benjamini-Hochberg); the slices show |t| >= %.2f, the smallest of theirs.", v.Total, v.alpha, v.Cut)
	}
	return text
}

// show loads map m: its t and q maps (and the atlas) for the rows, then the slices with the
// t-map at the rows' cut, the crosshair on the first row.
func (v *View) show(m string) {
	ctx, s := v.ctx, v.Summary
	v.Header.SetText("Loading the comparison of " + m + "…")
	go func() {
		t, err := v.svc.Volume(ctx, s.Job.ID, TName(m))
		var q, atlas *ipc.Volume
		if err == nil {
			q, err = v.svc.Volume(ctx, s.Job.ID, QName(m))
		}
		if err == nil && s.Atlas != nil && slices.Contains(s.Volumes, "atlas") {
			atlas, _ = v.svc.Volume(ctx, s.Job.ID, "atlas") // without it the rows have no region
		}
		if ctx.Err() != nil {
			return
		}
		fyne.Do(func() {
			if err != nil {
				v.Header.SetText("The comparison of " + m + " could not be read: " + err.Error())
				if v.OnLoaded != nil {
					v.OnLoaded(err)
				}
				return
			}
			v.shown, v.t, v.q, v.atlas = m, t, q, atlas
			v.list()
			v.Viewer.OnLoaded = func(err error) {
				if err == nil {
					v.showCut()
				}
				if v.OnLoaded != nil {
					v.OnLoaded(err)
				}
			}
			v.Viewer.LoadWithOverlay(ctx, s.Job.ID, viewerSummary(s), TName(m))
		})
	}()
}

// list fills the table and the header with the nodes at q <= alpha of the map shown.
func (v *View) list() {
	rows, total := Rows(v.Summary, v.t, v.q, v.atlas, v.alpha)
	v.Rows, v.Total, v.Cut = rows, total, Cut(rows)
	cells := make([][]string, len(rows))
	for i, r := range rows {
		cells[i] = r.Cells()
	}
	v.Table.SetRows(cells)
	v.Header.SetText(v.header(v.shown))
}

// showCut sets the slices' |t| threshold at the rows' cut and puts the crosshair on the first.
func (v *View) showCut() {
	v.Viewer.SetStyle(sl.ColdHot, v.Cut, v.Viewer.Style().Opacity)
	if len(v.Rows) > 0 {
		v.Viewer.SetCrosshair(v.Rows[0].Voxel)
	}
}

// SetAlpha lists the nodes at q <= alpha and moves the slices' threshold to their cut, as the
// rate picker does.
func (v *View) SetAlpha(alpha float64) {
	v.alpha = alpha
	if v.t == nil {
		return // not loaded yet: show uses the new rate
	}
	v.list()
	v.showCut()
}
