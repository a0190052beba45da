package daemon

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"sort"
	"strconv"
	"strings"
	"sync"

	"github.com/hubscope/hubscope/assets"
	"github.com/hubscope/hubscope/helper/atlas"
	"github.com/hubscope/hubscope/helper/nifti"
	"github.com/hubscope/hubscope/helper/realign"
	"github.com/hubscope/hubscope/ipc"
	"github.com/hubscope/hubscope/ipc/schema"
)

// bundleView is what the daemon keeps of a finished job's bundle to answer views quickly: the
// node grid and the bundle's raw metrics. Bundles never change once committed.
type bundleView struct {
	dir     string
	overlay string // a comparison's folder whose maps are served beside the bundle's ("" none)
	metrics []byte
	tr      float64
	n       int
	ijk     [][3]int32 // nil for a plain time-series matrix (no grid)
	dims    [3]int
	affine  [4][4]float64
	nodeOf  []int32 // grid voxel → node, −1 outside
	// atlasGrid is the AAL atlas resampled onto the grid when the scan is in MNI space.
	atlasGrid []float32
	mni       bool
	// toMNI maps grid voxels to MNI coordinates (mm): the scan's affine for a scan in MNI
	// space, composed with its registration (qc/registration.json) for a registered one; nil
	// when neither. registered marks the second case, scanToMNI is then the registration.
	toMNI      *[4][4]float64
	registered bool
	scanToMNI  *[4][4]float64
	// template is the MNI display template on the grid, made on first request.
	templateOnce sync.Once
	template     []float32
	templateErr  error
	dfcFrames    int // windows in dfc/degree.nii.gz (0 = none)
}

func (v *bundleView) flat(p [3]int32) int {
	return int(p[0]) + v.dims[0]*(int(p[1])+v.dims[1]*int(p[2]))
}

// view loads (or takes from the cache) a finished job's bundle view.
func (d *Daemon) view(id string) (*bundleView, record, error) {
	r, dir, err := d.finished(id)
	if err != nil {
		return nil, r, err
	}
	v, err := d.views.load(id, func() (*bundleView, error) { return d.loadView(r, dir) })
	return v, r, err
}

func (d *Daemon) loadView(r record, dir string) (*bundleView, error) {
	v := &bundleView{dir: dir, overlay: r.OverlayDir}
	var err error
	if v.metrics, err = os.ReadFile(filepath.Join(dir, "metrics.json")); err != nil {
		return nil, fmt.Errorf("job %s: %w", r.ID, err)
	}
	var m struct {
		Scan struct {
			TR    float64 `json:"tr_seconds"`
			Nodes int     `json:"nodes"`
		} `json:"scan"`
	}
	if err := json.Unmarshal(v.metrics, &m); err != nil {
		return nil, fmt.Errorf("job %s: metrics.json: %w", r.ID, err)
	}
	v.tr, v.n = m.Scan.TR, m.Scan.Nodes
	rows, err := readTSV(filepath.Join(dir, "nodes.tsv"))
	if err != nil {
		return nil, fmt.Errorf("job %s: %w", r.ID, err)
	}
	if len(rows.rows) != v.n {
		return nil, fmt.Errorf("job %s: nodes.tsv has %d rows for %d nodes", r.ID, len(rows.rows), v.n)
	}
	if rows.has("i") {
		h, err := readHeader(filepath.Join(dir, "degree.nii.gz"))
		if err != nil {
			return nil, fmt.Errorf("job %s: %w", r.ID, err)
		}
		v.dims, v.affine = [3]int{h.Nx(), h.Ny(), h.Nz()}, h.Affine()
		v.ijk = make([][3]int32, v.n)
		v.nodeOf = make([]int32, v.dims[0]*v.dims[1]*v.dims[2])
		for i := range v.nodeOf {
			v.nodeOf[i] = -1
		}
		for n := range rows.rows {
			var p [3]int32
			for a, col := range []string{"i", "j", "k"} {
				x, err := strconv.Atoi(rows.get(n, col))
				if err != nil || x < 0 || x >= v.dims[a] {
					return nil, fmt.Errorf("job %s: nodes.tsv row %d: voxel %s = %q outside the %v grid", r.ID, n+1, col, rows.get(n, col), v.dims)
				}
				p[a] = int32(x)
			}
			v.ijk[n] = p
			v.nodeOf[v.flat(p)] = int32(n)
		}
		if err := d.decideSpace(v, r); err != nil {
			return nil, err
		}
		if err := d.registeredSpace(v, r); err != nil {
			return nil, err
		}
	}
	if h, err := readHeader(filepath.Join(dir, "dfc", "degree.nii.gz")); err == nil && h.Nx() == v.dims[0] && h.Ny() == v.dims[1] && h.Nz() == v.dims[2] {
		v.dfcFrames = h.Volumes()
	}
	return v, nil
}

// registeredSpace sets the grid's map to MNI: the scan's affine when it lies in MNI space, or
// composed with its registration, whose atlas grid then names the crosshair's region as the
// hubs' labels were named (through the same affine).
func (d *Daemon) registeredSpace(v *bundleView, r record) error {
	if v.mni {
		a := v.affine
		v.toMNI = &a
		return nil
	}
	to, err := scanToMNI(v.dir)
	if err != nil {
		return fmt.Errorf("job %s: %w", r.ID, err)
	}
	if to == nil {
		return nil
	}
	m := realign.Mul(*to, v.affine)
	v.toMNI, v.scanToMNI, v.registered = &m, to, true
	a, err := d.aal()
	if err != nil {
		return err
	}
	if grid, err := a.atlas.Resample(v.dims, m); err == nil {
		v.atlasGrid = grid
	}
	return nil
}

func readHeader(path string) (nifti.Header, error) {
	r, err := nifti.Open(path)
	if err != nil {
		return nifti.Header{}, err
	}
	h := r.Header
	r.Close()
	return h, nil
}

// atlasData is the embedded AAL atlas, read once.
type atlasData struct {
	atlas *atlas.Atlas
	info  ipc.AtlasInfo
}

func (d *Daemon) aal() (*atlasData, error) {
	d.atlasOnce.Do(func() {
		a, err := atlas.LoadFS(assets.Atlas, assets.AtlasImage, assets.AtlasNames)
		if err != nil {
			d.atlasErr = err
			return
		}
		// The atlas is read-only from here on, so the summary may share its names.
		d.atlas = &atlasData{atlas: a, info: ipc.AtlasInfo{Name: "AAL (Tzourio-Mazoyer et al. 2002)",
			Citation: assets.AtlasCitation, Labels: a.Names}}
	})
	return d.atlas, d.atlasErr
}

// decideSpace decides whether the scan lies in MNI space, where the AAL atlas names regions
// (atlas.InMNI: the header's codes, and for aligned or template codes the grid's fit).
func (d *Daemon) decideSpace(v *bundleView, r record) error {
	codes := []int32{r.SformCode, r.QformCode}
	if !atlas.MaySayMNI(codes) {
		return nil
	}
	a, err := d.aal()
	if err != nil {
		return err
	}
	v.atlasGrid = a.atlas.InMNI(codes, v.dims, v.affine, func(f int) bool { return v.nodeOf[f] >= 0 }, v.n)
	v.mni = v.atlasGrid != nil
	return nil
}

// tsv is a parsed tab-separated table with a header.
type tsv struct {
	cols map[string]int
	rows [][]string
}

func (t *tsv) has(col string) bool { _, ok := t.cols[col]; return ok }

func (t *tsv) get(row int, col string) string {
	c, ok := t.cols[col]
	if !ok || c >= len(t.rows[row]) {
		return ""
	}
	return t.rows[row][c]
}

func readTSV(path string) (*tsv, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 1<<16), 1<<20)
	t := &tsv{cols: map[string]int{}}
	for line := 0; sc.Scan(); line++ {
		fields := strings.Split(sc.Text(), "\t")
		if line == 0 {
			for i, c := range fields {
				t.cols[c] = i
			}
			continue
		}
		t.rows = append(t.rows, fields)
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	if len(t.cols) == 0 {
		return nil, fmt.Errorf("%s: no header", path)
	}
	return t, nil
}

// Guimerà & Amaral's hub roles by participation coefficient P (Nature 433:895, 2005): R5
// provincial hubs P ≤ 0.30, R6 connector hubs 0.30 < P ≤ 0.75, R7 kinless hubs P > 0.75.
func hubRole(p float64) string {
	switch {
	case p <= 0.30:
		return "provincial"
	case p <= 0.75:
		return "connector"
	default:
		return "kinless"
	}
}

// Summary reports a finished job: metrics.json verbatim, the hub table joined with modules,
// participation and atlas regions, and what else the bundle offers.
func (d *Daemon) Summary(ctx context.Context, id string) (ipc.Summary, error) {
	v, r, err := d.view(id)
	if err != nil {
		return ipc.Summary{}, err
	}
	s := ipc.Summary{Job: r.Job, Bundle: v.dir, Metrics: v.metrics, Hubs: []ipc.Hub{}}
	if s.Files, err = listFiles(v.dir); err != nil {
		return s, err
	}
	d.prefetchSeeds(id, v, s.Files)
	s.Volumes = v.volumeNames()
	s.ScanToMNI = v.scanToMNI
	if v.atlasGrid != nil {
		a, err := d.aal()
		if err != nil {
			return s, err
		}
		info := a.info
		s.Atlas = &info
	}
	if s.Hubs, err = d.hubs(v); err != nil {
		return s, err
	}
	if b, err := os.ReadFile(filepath.Join(v.dir, "dfc", "summary.json")); err == nil {
		var dfc schema.DFCSummary
		if err := json.Unmarshal(b, &dfc); err != nil {
			return s, fmt.Errorf("job %s: dfc/summary.json: %w", id, err)
		}
		s.DFC = &dfc
	}
	if b, err := os.ReadFile(filepath.Join(v.dir, schema.GroupFile)); err == nil {
		var g schema.Group
		if err := json.Unmarshal(b, &g); err != nil {
			return s, fmt.Errorf("job %s: %s: %w", id, schema.GroupFile, err)
		}
		s.Group = &g
	}
	if v.overlay != "" {
		b, err := os.ReadFile(filepath.Join(v.overlay, schema.ComparisonFile))
		if err != nil {
			return s, fmt.Errorf("job %s: %w", id, err)
		}
		var c schema.Comparison
		if err := json.Unmarshal(b, &c); err != nil {
			return s, fmt.Errorf("job %s: %s: %w", id, schema.ComparisonFile, err)
		}
		s.Comparison = &c
	}
	if b, err := os.ReadFile(filepath.Join(v.dir, "provenance.json")); err == nil {
		var p struct {
			InputChecks *schema.InputChecks `json:"input_checks"`
		}
		if err := json.Unmarshal(b, &p); err != nil {
			return s, fmt.Errorf("job %s: provenance.json: %w", id, err)
		}
		s.InputChecks = p.InputChecks
	}
	return s, nil
}

func (d *Daemon) hubs(v *bundleView) ([]ipc.Hub, error) {
	t, err := readTSV(filepath.Join(v.dir, "hubs.tsv"))
	if err != nil {
		return nil, err
	}
	// Per-node maps on the grid, when the bundle has them (basic and full metrics).
	gridMap := func(name string) []float32 {
		if v.ijk == nil {
			return nil
		}
		_, data, err := nifti.ReadImage(filepath.Join(v.dir, name+".nii.gz"))
		if err != nil || len(data) != len(v.nodeOf) {
			return nil
		}
		return data
	}
	modules, participation := gridMap("modules"), gridMap("participation")
	var aal *atlas.Atlas
	if v.mni || v.registered {
		a, err := d.aal()
		if err != nil {
			return nil, err
		}
		aal = a.atlas
	}
	hubs := make([]ipc.Hub, 0, len(t.rows))
	num := func(row int, col string) float64 {
		x, _ := strconv.ParseFloat(t.get(row, col), 64)
		return x
	}
	for row := range t.rows {
		h := ipc.Hub{Node: int(num(row, "node")), Degree: int(num(row, "degree")),
			Strength: num(row, "strength"), HubZ: num(row, "hub_z"), Region: t.get(row, "atlas_label")}
		if v.ijk != nil {
			if h.Node < 0 || h.Node >= v.n {
				return nil, fmt.Errorf("hubs.tsv row %d: node %d of %d", row+1, h.Node, v.n)
			}
			p := v.ijk[h.Node]
			h.Voxel = [3]int{int(p[0]), int(p[1]), int(p[2])}
			h.MNI = [3]float64{num(row, "x_mm"), num(row, "y_mm"), num(row, "z_mm")}
			// Hub.MNI stays the scan's world position, where the 3D view's surface and the
			// slices lie; a registered scan's atlas region is looked up at its MNI position
			// through the registration (hubs.tsv's x_mni … when the pipeline wrote them).
			mni := h.MNI
			if v.registered {
				if t.has("x_mni") {
					mni = [3]float64{num(row, "x_mni"), num(row, "y_mni"), num(row, "z_mni")}
				} else {
					mni = apply(*v.scanToMNI, h.MNI)
				}
			}
			f := v.flat(p)
			if modules != nil {
				h.Module = int(modules[f])
			}
			if participation != nil {
				pc := float64(participation[f])
				h.Participation = &pc
				h.Role = hubRole(pc)
			}
			if aal != nil {
				_, h.Region = aal.Region(mni)
			}
		}
		hubs = append(hubs, h)
	}
	return hubs, nil
}

// apply maps point x through the affine a.
func apply(a [4][4]float64, x [3]float64) [3]float64 {
	var y [3]float64
	for r := range 3 {
		y[r] = a[r][0]*x[0] + a[r][1]*x[1] + a[r][2]*x[2] + a[r][3]
	}
	return y
}

// mapName is the form of a volume name that maps to a bundle file (name.nii.gz).
var mapName = regexp.MustCompile(`^[a-z][a-z0-9_]*$`)

// categorical volumes hold labels; the rest are quantities.
var categorical = map[string]bool{"hubs": true, "modules": true, "mask": true, "atlas": true, "hubs_lost": true, "hubs_gained": true, "cohort_hubs": true}

var descriptions = map[string]string{
	"degree":          "degree (number of links)",
	"strength":        "strength (sum of link weights)",
	"hubs":            "hubs (1 = hub)",
	"hub_z":           "hub score (degree z-score)",
	"modules":         "module (1 = largest)",
	"participation":   "participation coefficient across modules",
	"within_module_z": "within-module degree z-score",
	"clustering":      "clustering coefficient",
	"efficiency":      "local efficiency",
	"eigenvector":     "eigenvector centrality (maximum 1)",
	"betweenness":     "betweenness centrality",
	"mean":            "temporal mean of the scan",
	VolumeTemplate:    "MNI152 T1 template (ICBM 2009a)",
	"hubs_lost":       "cohort hubs lost (z < −2)",
	"hubs_gained":     "hubs gained against the cohort",
	"cohort_hubs":     "hubs of the normative cohort (1 = cohort hub)",
	"mask":            "analysis mask (1 = node)",
	"atlas":           "AAL atlas region",
	"dfc_degree":      "degree in one sliding window",
}

// volumeNames lists the volumes the bundle can serve.
func (v *bundleView) volumeNames() []string {
	if v.ijk == nil {
		return []string{}
	}
	var names []string
	for _, dir := range []string{v.dir, v.overlay} {
		if dir == "" {
			continue
		}
		entries, _ := os.ReadDir(dir)
		for _, e := range entries {
			name, ok := strings.CutSuffix(e.Name(), ".nii.gz")
			if ok && e.Type().IsRegular() && mapName.MatchString(name) && !slices.Contains(names, name) {
				names = append(names, name)
			}
		}
	}
	sort.Strings(names)
	names = append(names, "mask")
	if v.atlasGrid != nil {
		names = append(names, "atlas")
	}
	if v.toMNI != nil {
		names = append(names, VolumeTemplate)
	}
	for w := 0; w < v.dfcFrames; w++ {
		names = append(names, "dfc_degree@"+strconv.Itoa(w))
	}
	return names
}

func (v *bundleView) header(name string) ipc.VolumeHeader {
	base, _, _ := strings.Cut(name, "@")
	desc := descriptions[base]
	if m, ok := strings.CutPrefix(base, "z_"); ok && desc == "" {
		// run --norm's z-maps: (x − cohort mean) / cohort SD of each nodal map.
		what := descriptions[m]
		if what == "" {
			what = m
		}
		desc = "z against the normative cohort: " + what
	}
	if v.overlay != "" && desc == "" {
		// compare's maps: Welch's t of group A against B per node, its p and FDR q.
		for _, c := range []struct{ prefix, what string }{{"t_", "Welch's t (first group minus second): "}, {"p_permutation_", "permutation p: "}, {"p_", "p of Welch's t: "}, {"q_", "false discovery rate q (Benjamini-Hochberg): "}} {
			if m, ok := strings.CutPrefix(base, c.prefix); ok {
				what := descriptions[m]
				if what == "" {
					what = m
				}
				desc = c.what + what
				break
			}
		}
	}
	return ipc.VolumeHeader{Name: name, Dims: v.dims, Affine: v.affine, Categorical: categorical[base], Description: desc}
}

// Volume returns one of the bundle's volumes on the scan's full grid: quantities hold NaN
// outside the analysis mask, labels 0; "mean" is the whole image.
func (d *Daemon) Volume(ctx context.Context, id, name string) (*ipc.Volume, error) {
	v, _, err := d.view(id)
	if err != nil {
		return nil, err
	}
	if v.ijk == nil {
		return nil, ipc.Errorf(ipc.CodeNotFound, "job %s analysed a time-series matrix: it has no volumes", id)
	}
	vol := &ipc.Volume{Header: v.header(name)}
	switch base, frame, isFrame := strings.Cut(name, "@"); {
	case name == "mask":
		vol.Data = make([]float32, len(v.nodeOf))
		for f, n := range v.nodeOf {
			if n >= 0 {
				vol.Data[f] = 1
			}
		}
	case name == "atlas":
		if v.atlasGrid == nil {
			return nil, ipc.Errorf(ipc.CodeNotFound, "job %s: the scan is neither in MNI space nor registered to it, so no atlas is shown", id)
		}
		vol.Data = append([]float32(nil), v.atlasGrid...)
	case name == VolumeTemplate:
		if v.toMNI == nil {
			return nil, ipc.Errorf(ipc.CodeNotFound, "job %s: the scan is neither in MNI space nor registered to it, so the MNI template is not shown", id)
		}
		v.templateOnce.Do(func() {
			t, err := d.displayTemplate()
			if err != nil {
				v.templateErr = err
				return
			}
			v.template, v.templateErr = resampleTemplate(t, v.dims, *v.toMNI)
		})
		if v.templateErr != nil {
			return nil, fmt.Errorf("job %s: %w", id, v.templateErr)
		}
		vol.Data = append([]float32(nil), v.template...)
	case isFrame && base == "dfc_degree":
		w, err := strconv.Atoi(frame)
		if err != nil || w < 0 || w >= v.dfcFrames || strconv.Itoa(w) != frame {
			return nil, ipc.Errorf(ipc.CodeNotFound, "job %s has no volume %q (%d windows)", id, name, v.dfcFrames)
		}
		if vol.Data, err = readFrame(filepath.Join(v.dir, "dfc", "degree.nii.gz"), w, len(v.nodeOf)); err != nil {
			return nil, err
		}
	case !isFrame && mapName.MatchString(name):
		p := v.mapPath(name)
		fi, err := os.Lstat(p)
		if err != nil || !fi.Mode().IsRegular() {
			return nil, ipc.Errorf(ipc.CodeNotFound, "job %s has no volume %q", id, name)
		}
		h, data, err := nifti.ReadImage(p)
		if err != nil {
			return nil, err
		}
		if h.Volumes() != 1 || len(data) != len(v.nodeOf) {
			return nil, fmt.Errorf("job %s: %s.nii.gz is not a 3D map on the scan's %v grid", id, name, v.dims)
		}
		vol.Data = data
	default:
		return nil, ipc.Errorf(ipc.CodeNotFound, "job %s has no volume %q", id, name)
	}
	if name != "mean" && name != VolumeTemplate && !vol.Header.Categorical {
		nan := float32(math.NaN())
		for f, n := range v.nodeOf {
			if n < 0 {
				vol.Data[f] = nan
			}
		}
	}
	setRange(vol)
	return vol, nil
}

// mapPath is the file of map name: the bundle's, else the comparison's beside it.
func (v *bundleView) mapPath(name string) string {
	p := filepath.Join(v.dir, name+".nii.gz")
	if v.overlay != "" {
		if _, err := os.Lstat(p); err != nil {
			return filepath.Join(v.overlay, name+".nii.gz")
		}
	}
	return p
}

// readFrame reads volume w of a 4D image.
func readFrame(path string, w, voxels int) ([]float32, error) {
	r, err := nifti.Open(path)
	if err != nil {
		return nil, err
	}
	defer r.Close()
	if r.Header.VoxelsPerVolume() != voxels {
		return nil, fmt.Errorf("%s: %d voxels per volume, the grid has %d", path, r.Header.VoxelsPerVolume(), voxels)
	}
	buf := make([]float32, voxels)
	for t := 0; t <= w; t++ {
		if err := r.ReadVolume(buf); err != nil {
			return nil, err
		}
	}
	return buf, nil
}

// setRange sets Min and Max over the finite values (NaN marks outside the mask).
func setRange(vol *ipc.Volume) {
	lo, hi := float32(math.Inf(1)), float32(math.Inf(-1))
	for _, x := range vol.Data {
		if x == x && !math.IsInf(float64(x), 0) {
			lo, hi = min(lo, x), max(hi, x)
		}
	}
	if lo > hi {
		lo, hi = 0, 0
	}
	vol.Header.Min, vol.Header.Max = lo, hi
}
