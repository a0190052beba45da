package scan

import (
	"context"
	"encoding/binary"
	"encoding/json"
	"errors"
	"math"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"testing"

	"github.com/hubscope/hubscope/helper/internal/pyref"
	"github.com/hubscope/hubscope/helper/nifti"
	"github.com/hubscope/hubscope/internal/shareddata"
)

func dataDir(t testing.TB, files ...string) string {
	t.Helper()
	dir := shareddata.Dir()
	for _, f := range files {
		if _, err := os.Stat(filepath.Join(dir, f)); err != nil {
			if pyref.Strict() {
				t.Fatalf("test data missing: %v", err)
			}
			t.Skipf("test data missing: %v", err)
		}
	}
	return dir
}

// recorder is a progress.Reporter that keeps what it is told.
type recorder struct {
	mu     sync.Mutex
	stages []string
	totals []int64
	adds   []int64 // per stage
	notes  []string
	onAdd  func(n int64)
	calls  int // Add calls counted by a test's onAdd
}

func (r *recorder) Start(stage string, total int64) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.stages = append(r.stages, stage)
	r.totals = append(r.totals, total)
	r.adds = append(r.adds, 0)
}

func (r *recorder) Add(n int64) {
	r.mu.Lock()
	r.adds[len(r.adds)-1] += n
	cb := r.onAdd
	r.mu.Unlock()
	if cb != nil {
		cb(n)
	}
}

func (r *recorder) Note(msg string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.notes = append(r.notes, msg)
}

// maskedRefScript is the nibabel reference for a masked scan: argv scan, mask ("" for none:
// then argv[4..] are the mask's Fortran-order flat indices given by the caller), output file.
// It writes the kept series (float32, row-major) and prints the nodes' ijk, world mm, the
// affine, TR and the drop counts. Node order: increasing Fortran-order flat index.
const maskedRefScript = `
import sys, json
import numpy as np
import nibabel as nib
img = nib.load(sys.argv[1])
data = img.get_fdata()                     # scaled float64, as nibabel reads it
nx, ny, nz, nt = data.shape
if sys.argv[2]:
    m = np.asanyarray(nib.load(sys.argv[2]).dataobj)
    m = np.isfinite(m) & (m != 0)
    flat = np.flatnonzero(m.ravel(order="F"))
else:
    flat = np.array([int(a) for a in sys.argv[4:]], dtype=np.int64)
series = data.reshape(-1, nt, order="F")[flat].astype(np.float32)
nonfinite = ~np.all(np.isfinite(series), axis=1)
constant = ~nonfinite & np.all(series == series[:, :1], axis=1)
keep = ~nonfinite & ~constant
series = series[keep]
flat = flat[keep]
series.tofile(sys.argv[3])
i, j, k = np.unravel_index(flat, (nx, ny, nz), order="F")
ijk = np.stack([i, j, k], axis=1)
world = nib.affines.apply_affine(img.affine, ijk)
print(json.dumps({"n": int(len(flat)), "l": int(nt), "ijk": ijk.tolist(), "world": world.tolist(),
                  "affine": img.affine.tolist(), "tr": float(img.header.get_zooms()[3]),
                  "nonfinite": int(nonfinite.sum()), "constant": int(constant.sum()),
                  "mask_voxels": int(len(keep))}))
`

type maskedRef struct {
	N, L      int
	IJK       [][3]int32
	World     [][3]float64
	Affine    [4][4]float64
	TR        float64
	NonFinite int
	Constant  int
	MaskVox   int `json:"mask_voxels"`
	series    []float32
}

func runMaskedRef(t *testing.T, scan, mask string, flat ...string) maskedRef {
	t.Helper()
	pyref.Require(t, "numpy", "nibabel")
	out := filepath.Join(t.TempDir(), "series.f32")
	var ref maskedRef
	if err := json.Unmarshal(pyref.Run(t, maskedRefScript, append([]string{scan, mask, out}, flat...)...), &ref); err != nil {
		t.Fatalf("reference output: %v", err)
	}
	raw, err := os.ReadFile(out)
	if err != nil {
		t.Fatal(err)
	}
	ref.series = make([]float32, len(raw)/4)
	for i := range ref.series {
		ref.series[i] = math.Float32frombits(binary.LittleEndian.Uint32(raw[4*i:]))
	}
	return ref
}

// checkAgainstRef compares a loaded scan with the nibabel reference: same nodes in the same
// order, same series bit for bit, same ijk, world mm, affine and TR.
func checkAgainstRef(t *testing.T, s *Scan, ref maskedRef) {
	t.Helper()
	if s.N != ref.N || s.L != ref.L {
		t.Fatalf("scan is %d×%d, nibabel %d×%d", s.N, s.L, ref.N, ref.L)
	}
	if len(s.Data) != s.N*s.L || len(ref.series) != s.N*s.L {
		t.Fatalf("data holds %d values, reference %d, want %d", len(s.Data), len(ref.series), s.N*s.L)
	}
	for i := range s.Data {
		if s.Data[i] != ref.series[i] {
			t.Fatalf("node %d, time %d: got %v, nibabel %v", i/s.L, i%s.L, s.Data[i], ref.series[i])
		}
	}
	for v := 0; v < s.N; v++ {
		if s.IJK[v] != ref.IJK[v] {
			t.Fatalf("node %d at ijk %v, nibabel %v", v, s.IJK[v], ref.IJK[v])
		}
		w := s.World(v)
		for a := 0; a < 3; a++ {
			if math.Abs(w[a]-ref.World[v][a]) > 1e-4 {
				t.Fatalf("node %d at world %v mm, nibabel %v", v, w, ref.World[v])
			}
		}
		if got, ok := s.NodeAt(int(s.IJK[v][0]), int(s.IJK[v][1]), int(s.IJK[v][2])); !ok || got != v {
			t.Fatalf("NodeAt(%v) = %d, %v; want %d", s.IJK[v], got, ok, v)
		}
		if !s.Mask.In[s.Mask.Flat(int(s.IJK[v][0]), int(s.IJK[v][1]), int(s.IJK[v][2]))] {
			t.Fatalf("node %d at %v is not in the final mask", v, s.IJK[v])
		}
	}
	if s.Mask.Count() != s.N {
		t.Fatalf("final mask has %d voxels for %d nodes", s.Mask.Count(), s.N)
	}
	for r := 0; r < 4; r++ {
		for c := 0; c < 4; c++ {
			if math.Abs(s.Affine[r][c]-ref.Affine[r][c]) > 1e-5 {
				t.Fatalf("affine %v, nibabel %v", s.Affine, ref.Affine)
			}
		}
	}
	if math.Abs(s.TR-ref.TR) > 1e-6 {
		t.Fatalf("TR %g s, nibabel %g", s.TR, ref.TR)
	}
	if s.Dropped.NonFinite != ref.NonFinite || s.Dropped.ZeroVariance != ref.Constant || s.Dropped.MaskVoxels != ref.MaskVox {
		t.Fatalf("dropped %+v, nibabel non-finite %d constant %d of %d", s.Dropped, ref.NonFinite, ref.Constant, ref.MaskVox)
	}
}

// TestLoadRealScansMatchNibabel loads the real Haxby scans with their masks and compares the
// masked matrix, node order and coordinates with nibabel.
func TestLoadRealScansMatchNibabel(t *testing.T) {
	for _, c := range [][2]string{
		{"haxby2001_slice_bold.nii.gz", "haxby2001_slice_mask.nii.gz"},
		{"haxby2001_run001_bold_25mm.nii.gz", "haxby2001_mask_25mm_brain.nii.gz"},
	} {
		t.Run(c[0], func(t *testing.T) {
			dir := dataDir(t, c[0], c[1])
			scan, mask := filepath.Join(dir, c[0]), filepath.Join(dir, c[1])
			rep := &recorder{}
			s, err := Load(context.Background(), scan, Options{MaskPath: mask}, rep)
			if err != nil {
				t.Fatal(err)
			}
			checkAgainstRef(t, s, runMaskedRef(t, scan, mask))
			if len(rep.stages) != 1 || rep.stages[0] != "load" || rep.totals[0] != int64(s.L) || rep.adds[0] != int64(s.L) {
				t.Fatalf("progress stages %v totals %v adds %v; want one load stage of %d volumes", rep.stages, rep.totals, rep.adds, s.L)
			}
			// int16 data, one pass.
			if want := int64(s.L) * int64(s.Dims[0]*s.Dims[1]*s.Dims[2]) * 2; s.BytesRead != want || s.Passes != 1 {
				t.Fatalf("BytesRead %d in %d passes, want %d in 1", s.BytesRead, s.Passes, want)
			}
			t.Logf("%d nodes × %d, dropped %+v", s.N, s.L, s.Dropped)
		})
	}
}

// TestLoadEPIMaskMatchesReference loads the 25 mm Haxby run with the automatic mask: the mask
// must be the scipy reimplementation of compute_epi_mask's threshold on nibabel's mean image
// (the fallback rule this cropped image takes), and the matrix nibabel's masked data.
func TestLoadEPIMaskMatchesReference(t *testing.T) {
	const f = "haxby2001_run001_bold_25mm.nii.gz"
	dir := dataDir(t, f)
	scan := filepath.Join(dir, f)
	rep := &recorder{}
	s, err := Load(context.Background(), scan, Options{}, rep)
	if err != nil {
		t.Fatal(err)
	}
	// nilearn's mask keeps 18 of the 600 voxels of this cropped image (all of which change
	// over time), under MinMaskShare: the mask is the reference's histogram threshold alone.
	epi := runEPIRef(t, epiCase{"4d", scan, 0.2, 0.85, 1})[0]
	if len(epi.Mask) != 18 || s.MaskRule != MaskRuleThreshold {
		t.Fatalf("nilearn's mask has %d voxels and the rule is %q; want 18 and the threshold alone", len(epi.Mask), s.MaskRule)
	}
	var flat []string
	for f, v := range epi.smoothed {
		if v >= epi.Threshold {
			flat = append(flat, itoa(f))
		}
	}
	checkAgainstRef(t, s, runMaskedRef(t, scan, "", flat...))
	// One decoding: the stored volumes are kept for the mask's series (loadOnce).
	if s.Passes != 1 || s.BytesRead != int64(s.L)*6*10*10*2 {
		t.Fatalf("BytesRead %d in %d passes; want one pass over the int16 data", s.BytesRead, s.Passes)
	}
	if strings.Join(rep.stages, ",") != "load" || rep.adds[0] != int64(s.L) {
		t.Fatalf("progress stages %v adds %v", rep.stages, rep.adds)
	}
}

func itoa(n int) string {
	b, _ := json.Marshal(n)
	return string(b)
}

// writeScan writes a float32 4D image (or 3D when len(dims) == 3) whose voxel (i,j,k) at
// time t holds value(i, j, k, t).
func writeScan(t testing.TB, path string, dims []int, affine [4][4]float64, value func(i, j, k, t int) float32) {
	t.Helper()
	nt := 1
	if len(dims) > 3 {
		nt = dims[3]
	}
	nx, ny, nz := dims[0], dims[1], dims[2]
	data := make([]float32, 0, nx*ny*nz*nt)
	for tt := 0; tt < nt; tt++ {
		for k := 0; k < nz; k++ {
			for j := 0; j < ny; j++ {
				for i := 0; i < nx; i++ {
					data = append(data, value(i, j, k, tt))
				}
			}
		}
	}
	h := nifti.NewHeader(dims, nifti.Float32, affine, 2)
	if err := nifti.WriteImage(path, h, data); err != nil {
		t.Fatal(err)
	}
}

var testAffine = [4][4]float64{{-3, 0, 0, 90}, {0, 3, 0, -126}, {0, 0, 3.5, -72}, {0, 0, 0, 1}}

// synthValue is a distinct, non-constant value for every voxel and time point.
func synthValue(i, j, k, t int) float32 {
	return float32(1000*i+100*j+10*k) + float32(math.Sin(float64(t)*0.7+float64(i+2*j+3*k)))
}

// TestLoadScatterAndDropping checks the blocked transpose against the definition for an L
// that is not a multiple of the block, and the dropping of constant and NaN/Inf series.
func TestLoadScatterAndDropping(t *testing.T) {
	dir := t.TempDir()
	dims := []int{7, 5, 4, 37}
	bad := map[[3]int]string{{0, 0, 0}: "const", {3, 2, 1}: "nan", {6, 4, 3}: "inf", {2, 1, 3}: "const", {5, 0, 2}: "-inf"}
	scan := filepath.Join(dir, "scan.nii.gz")
	writeScan(t, scan, dims, testAffine, func(i, j, k, tt int) float32 {
		switch bad[[3]int{i, j, k}] {
		case "const":
			return 42
		case "nan":
			if tt == 36 {
				return float32(math.NaN())
			}
		case "inf":
			if tt == 16 {
				return float32(math.Inf(1))
			}
		case "-inf":
			if tt == 0 {
				return float32(math.Inf(-1))
			}
		}
		return synthValue(i, j, k, tt)
	})
	// The mask leaves out the voxels with i == 1.
	mask := filepath.Join(dir, "mask.nii")
	writeScan(t, mask, dims[:3], testAffine, func(i, j, k, _ int) float32 {
		if i == 1 {
			return 0
		}
		return 1
	})
	rep := &recorder{}
	s, err := Load(context.Background(), scan, Options{MaskPath: mask}, rep)
	if err != nil {
		t.Fatal(err)
	}
	inMask := 6 * 5 * 4
	if s.Dropped != (DropStats{MaskVoxels: inMask, ZeroVariance: 2, NonFinite: 3}) {
		t.Fatalf("dropped %+v", s.Dropped)
	}
	if s.N != inMask-5 || s.L != 37 {
		t.Fatalf("scan %d×%d, want %d×37", s.N, s.L, inMask-5)
	}
	if len(rep.notes) != 1 || !strings.Contains(rep.notes[0], "dropped 5 of 120") {
		t.Fatalf("notes %q", rep.notes)
	}
	v := 0
	for k := 0; k < 4; k++ {
		for j := 0; j < 5; j++ {
			for i := 0; i < 7; i++ {
				if i == 1 || bad[[3]int{i, j, k}] != "" {
					if _, ok := s.NodeAt(i, j, k); ok {
						t.Fatalf("voxel %d,%d,%d is a node", i, j, k)
					}
					continue
				}
				if s.IJK[v] != [3]int32{int32(i), int32(j), int32(k)} {
					t.Fatalf("node %d at %v, want %d,%d,%d", v, s.IJK[v], i, j, k)
				}
				for tt, x := range s.Series(v) {
					if want := synthValue(i, j, k, tt); x != want {
						t.Fatalf("node %d (%d,%d,%d) time %d: %v, want %v", v, i, j, k, tt, x, want)
					}
				}
				v++
			}
		}
	}
	if v != s.N {
		t.Fatalf("visited %d nodes of %d", v, s.N)
	}
}

// TestLoadErrors checks that bad inputs give errors that name the file and the problem.
func TestLoadErrors(t *testing.T) {
	dir := t.TempDir()
	scan := filepath.Join(dir, "scan.nii")
	writeScan(t, scan, []int{4, 3, 2, 5}, testAffine, synthValue)
	vol3d := filepath.Join(dir, "anat.nii.gz")
	writeScan(t, vol3d, []int{4, 3, 2}, testAffine, func(i, j, k, _ int) float32 { return 1 })
	two := filepath.Join(dir, "two.nii")
	writeScan(t, two, []int{4, 3, 2, 2}, testAffine, synthValue)
	allBad := filepath.Join(dir, "flat.nii")
	writeScan(t, allBad, []int{4, 3, 2, 6}, testAffine, func(i, j, k, tt int) float32 {
		if i == 0 {
			return float32(math.NaN())
		}
		return 7
	})
	constant := filepath.Join(dir, "constant.nii")
	writeScan(t, constant, []int{4, 3, 2, 5}, testAffine, func(i, j, k, _ int) float32 { return float32(i + j + k) })
	mask := func(name string, dims []int, aff [4][4]float64, in func(i, j, k int) bool) string {
		p := filepath.Join(dir, name)
		writeScan(t, p, dims, aff, func(i, j, k, _ int) float32 {
			if in(i, j, k) {
				return 1
			}
			return 0
		})
		return p
	}
	all := func(i, j, k int) bool { return true }
	wrongGrid := mask("grid.nii", []int{4, 3, 3}, testAffine, all)
	shifted := testAffine
	shifted[1][3] += 0.01
	wrongAffine := mask("affine.nii", []int{4, 3, 2}, shifted, all)
	empty := mask("empty.nii", []int{4, 3, 2}, testAffine, func(i, j, k int) bool { return false })
	mask4d := filepath.Join(dir, "mask4d.nii")
	writeScan(t, mask4d, []int{4, 3, 2, 2}, testAffine, synthValue)

	// A gzip stream cut in the middle of the data: the error comes from the decoding
	// goroutine and must still name the file.
	cut := filepath.Join(dir, "cut.nii.gz")
	writeScan(t, cut, []int{9, 8, 7, 30}, testAffine, synthValue)
	if raw, err := os.ReadFile(cut); err != nil {
		t.Fatal(err)
	} else if err := os.WriteFile(cut, raw[:len(raw)*2/3], 0o644); err != nil {
		t.Fatal(err)
	}
	cutMask := mask("cutmask.nii", []int{9, 8, 7}, testAffine, all)

	cases := []struct {
		name, path string
		opt        Options
		want       []string
	}{
		{"truncated gzip", cut, Options{MaskPath: cutMask}, []string{"cut.nii.gz", "volume"}},
		{"bad cutoffs", scan, Options{LowerCutoff: 0.9, UpperCutoff: 0.5}, []string{"scan.nii", "cutoffs 0.9 and 0.5"}},
		{"missing file", filepath.Join(dir, "nope.nii.gz"), Options{}, []string{"nope.nii.gz"}},
		{"3D image", vol3d, Options{}, []string{"anat.nii.gz", "3D image", "4D time series"}},
		{"two volumes", two, Options{}, []string{"two.nii", "2 volumes", "at least 3"}},
		{"mask grid", scan, Options{MaskPath: wrongGrid}, []string{"grid.nii", "4×3×3", "4×3×2"}},
		{"mask affine", scan, Options{MaskPath: wrongAffine}, []string{"affine.nii", "0.01 mm"}},
		{"empty mask", scan, Options{MaskPath: empty}, []string{"empty.nii", "empty"}},
		{"4D mask", scan, Options{MaskPath: mask4d}, []string{"mask4d.nii", "2 volumes"}},
		{"missing mask", scan, Options{MaskPath: filepath.Join(dir, "nomask.nii")}, []string{"nomask.nii"}},
		{"every voxel bad", allBad, Options{MaskPath: mask("m.nii", []int{4, 3, 2}, testAffine, all)}, []string{"flat.nii", "every one of the 24 voxels"}},
		{"nothing changes", constant, Options{}, []string{"constant.nii", "no voxel's signal changes"}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			s, err := Load(context.Background(), c.path, c.opt, nil)
			if err == nil {
				t.Fatalf("no error; loaded %d×%d", s.N, s.L)
			}
			t.Log(err)
			for _, w := range c.want {
				if !strings.Contains(err.Error(), w) {
					t.Fatalf("error %q does not say %q", err, w)
				}
			}
		})
	}
	// Within tolerance: an affine 1e-4 mm off is the same grid.
	near := testAffine
	near[0][3] += 1e-4
	if _, err := Load(context.Background(), scan, Options{MaskPath: mask("near.nii", []int{4, 3, 2}, near, all)}, nil); err != nil {
		t.Fatalf("mask 1e-4 mm off: %v", err)
	}
}

// TestLoadCancellation cancels after a few volumes: Load stops at the next volume and says why.
func TestLoadCancellation(t *testing.T) {
	dir := t.TempDir()
	scan := filepath.Join(dir, "scan.nii.gz")
	writeScan(t, scan, []int{6, 5, 4, 40}, testAffine, synthValue)
	mask := filepath.Join(dir, "mask.nii.gz")
	writeScan(t, mask, []int{6, 5, 4}, testAffine, func(i, j, k, _ int) float32 { return 1 })
	for _, opt := range []Options{{MaskPath: mask}, {}} {
		ctx, cancel := context.WithCancel(context.Background())
		rep := &recorder{}
		volumes, steps := int64(0), 0
		rep.onAdd = func(n int64) {
			volumes += n
			if steps++; steps == 3 || n > 1 {
				cancel()
			}
		}
		_, err := Load(ctx, scan, opt, rep)
		cancel()
		if !errors.Is(err, context.Canceled) || !strings.Contains(err.Error(), "scan.nii.gz") {
			t.Fatalf("mask %q: error %v, want a cancellation naming the file", opt.MaskPath, err)
		}
		// A file inflated at once (user mask, nifti.Reader.InflateAll) is one step of 40.
		if volumes != 3 && !(steps == 1 && volumes == 40) {
			t.Fatalf("mask %q: %d volumes read in %d steps after cancelling at 3", opt.MaskPath, volumes, steps)
		}
	}
}

func TestWorldToVoxel(t *testing.T) {
	a := [4][4]float64{{-2.5, 0.3, 0, 90}, {0.1, 2.4, -0.2, -126}, {0, 0.4, 3.1, -72}, {0, 0, 0, 1}}
	for _, ijk := range [][3]float64{{0, 0, 0}, {12, 7.5, 3}, {-4, 99, 0.25}} {
		got, err := WorldToVoxel(a, VoxelToWorld(a, ijk))
		if err != nil {
			t.Fatal(err)
		}
		for c := 0; c < 3; c++ {
			if math.Abs(got[c]-ijk[c]) > 1e-9 {
				t.Fatalf("round trip of %v gave %v", ijk, got)
			}
		}
	}
	sing := [4][4]float64{{2, 4, 0, 0}, {1, 2, 0, 0}, {0, 0, 3, 0}, {0, 0, 0, 1}}
	if _, err := WorldToVoxel(sing, [3]float64{1, 2, 3}); err == nil {
		t.Fatal("singular affine accepted")
	}
}

// TestNodeAtWithoutIndex checks the binary-search fallback against the dense index.
func TestNodeAtWithoutIndex(t *testing.T) {
	s := &Scan{Dims: [3]int{5, 4, 3}}
	for f := 0; f < 60; f++ {
		if f%3 == 0 || f%7 == 0 {
			s.IJK = append(s.IJK, [3]int32{int32(f % 5), int32((f / 5) % 4), int32(f / 20)})
		}
	}
	indexed := *s
	indexed.IndexGrid()
	for k := -1; k <= 3; k++ {
		for j := -1; j <= 4; j++ {
			for i := -1; i <= 5; i++ {
				v1, ok1 := s.NodeAt(i, j, k)
				v2, ok2 := indexed.NodeAt(i, j, k)
				f := i + 5*(j+4*k)
				inGrid := i >= 0 && j >= 0 && k >= 0 && i < 5 && j < 4 && k < 3
				want := inGrid && (f%3 == 0 || f%7 == 0)
				if ok1 != want || ok2 != want || (want && (v1 != v2 || s.IJK[v1] != [3]int32{int32(i), int32(j), int32(k)})) {
					t.Fatalf("NodeAt(%d,%d,%d): search %d,%v index %d,%v, want in=%v", i, j, k, v1, ok1, v2, ok2, want)
				}
			}
		}
	}
}

// TestLoadMemory bounds everything Load allocates (runtime TotalAlloc, so also the peak) by
// the masked matrix plus the documented buffers: 16 gathered masked volumes, 3 decoded
// volumes in flight, the EPI mask's float64 work images (and the first pass's copy of the
// first volume and changing-signal flags, 9 bytes a voxel), per-node bookkeeping and the NIfTI
// reader's 1 MiB chunk per open, and with the automatic mask the stored int16 volumes
// (loadOnce, 7.8 MB here). Holding the 4D image in float32 (15.6 MB) would break the bound.
func TestLoadMemory(t *testing.T) {
	dir := t.TempDir()
	const nx, ny, nz, L = 30, 36, 24, 150
	G := nx * ny * nz
	inside := func(i, j, k int) bool { return (i+j+k)%2 == 0 || i < 10 }
	data := make([]float32, 0, G*L)
	for tt := 0; tt < L; tt++ {
		for k := 0; k < nz; k++ {
			for j := 0; j < ny; j++ {
				for i := 0; i < nx; i++ {
					v := float32(20 + (i*7+j*3+k+tt*5)%11)
					if i > 3 && i < 26 && j > 3 && j < 32 && k > 3 && k < 20 {
						v += 800
					}
					data = append(data, v)
				}
			}
		}
	}
	scan := filepath.Join(dir, "run.nii")
	if err := nifti.WriteImage(scan, nifti.NewHeader([]int{nx, ny, nz, L}, nifti.Int16, testAffine, 2), data); err != nil {
		t.Fatal(err)
	}
	data = nil
	mask := filepath.Join(dir, "mask.nii")
	writeScan(t, mask, []int{nx, ny, nz}, testAffine, func(i, j, k, _ int) float32 {
		if inside(i, j, k) {
			return 1
		}
		return 0
	})
	for _, opt := range []Options{{MaskPath: mask}, {}} {
		before := totalAlloc()
		s, err := Load(context.Background(), scan, opt, nil)
		if err != nil {
			t.Fatal(err)
		}
		used := totalAlloc() - before
		matrix := uint64(s.Dropped.MaskVoxels) * L * 4
		overhead := uint64(scatterVolumes*s.Dropped.MaskVoxels*4+(streamDepth+1)*G*8+13*G*8+9*G+32*s.Dropped.MaskVoxels) + 3<<20
		if opt.MaskPath == "" {
			// The automatic mask keeps the stored volumes (int16) to take the series from
			// one decoding (loadOnce): 2 bytes a value, half the float32 image.
			overhead += uint64(G * L * 2)
		}
		t.Logf("mask %q: %d nodes, allocated %.1f MB for a %.1f MB matrix (bound %.1f MB)", opt.MaskPath, s.N,
			float64(used)/1e6, float64(matrix)/1e6, float64(matrix+overhead)/1e6)
		if used > matrix+overhead {
			t.Fatalf("Load allocated %d bytes; the masked matrix is %d and the buffers may add %d", used, matrix, overhead)
		}
	}
}

func totalAlloc() uint64 {
	var m runtime.MemStats
	runtime.ReadMemStats(&m)
	return m.TotalAlloc
}
