package scan

import (
	"context"
	"errors"
	"fmt"
	"io"
	"maps"
	"math"
	"runtime"
	"slices"
	"strings"
	"sync"
	"sync/atomic"

	"github.com/hubscope/hubscope/helper/nifti"
	"github.com/hubscope/hubscope/helper/progress"
)

// scatterVolumes is how many masked volumes are gathered before they are written into the
// voxel-major matrix: writing volume t alone into column t of the N×L matrix touches one
// cache line per voxel for 4 useful bytes; 16 volumes fill a whole 64-byte line of each
// voxel's series per visit (BenchmarkScatter measures the difference).
const scatterVolumes = 16

// loadNIfTI streams a 4D NIfTI into the masked voxel-major matrix.
func loadNIfTI(ctx context.Context, path string, opt Options, rep progress.Reporter) (*Scan, error) {
	r, err := nifti.Open(path)
	if err != nil {
		return nil, err
	}
	defer func() {
		if r != nil {
			r.Close()
		}
	}()
	// Hash the scan (and the mask) beside the load; cancel stops the hashers on every
	// early return.
	dctx, cancel := context.WithCancel(ctx)
	defer cancel()
	digests := []func() (FileDigest, error){digestAsync(dctx, path)}
	if opt.MaskPath != "" {
		digests = append(digests, digestAsync(dctx, opt.MaskPath))
	}
	h := r.Header
	sel, err := SelectVolumes(&h, opt.TimeAxis, opt.Index)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	L := h.Volumes()
	if sel != nil {
		L = len(sel)
	}
	if opt.TimeAxis > 4 || len(opt.Index) > 0 {
		rep.Note(SelectionNote(&h, opt.TimeAxis, opt.Index, L))
	}
	if h.Dim[0] < 4 || L < 2 {
		return nil, fmt.Errorf("%s: 3D image (%d×%d×%d, one volume) where a 4D time series is needed", path, h.Nx(), h.Ny(), h.Nz())
	}
	if L < MinTimePoints {
		return nil, fmt.Errorf("%s: %d volumes; at least %d time points are needed for a correlation", path, L, MinTimePoints)
	}
	dims := [3]int{h.Nx(), h.Ny(), h.Nz()}
	if h.VoxelsPerVolume() > math.MaxInt32 {
		// Node positions and the grid index are int32.
		return nil, fmt.Errorf("%s: grid %d×%d×%d has more than 2³¹ voxels", path, dims[0], dims[1], dims[2])
	}
	s := &Scan{L: L, Dims: dims, Affine: h.Affine(), TR: h.TR(), TRSource: h.TRSource(), Warnings: r.Warnings, Source: path, Passes: 1}
	if opt.TimeAxis > 4 {
		// The volumes along the named axis are the file's volumes in order (every other
		// non-spatial axis has length 1); its step is pixdim[axis], in the header's time unit.
		s.TR, s.TRSource, s.Warnings = timeAxisTR(r.Header, opt.TimeAxis)
	}
	volBytes := int64(h.VoxelsPerVolume()) * int64(h.DataType.Size())

	if lo, up := opt.LowerCutoff, opt.UpperCutoff; lo < 0 || up < 0 || lo >= 1 || up > 1 || (lo > 0 && up > 0 && lo >= up) {
		return nil, fmt.Errorf("%s: EPI mask cutoffs %g and %g: need 0 ≤ lower < upper ≤ 1 (0 = default)", path, lo, up)
	}
	var mask Mask
	var sum []float64 // Σ_t x_t per grid voxel, for opt.Mean while loading with a user mask
	if opt.Mask != nil {
		if opt.Mask.Dims != dims || len(opt.Mask.In) != h.VoxelsPerVolume() {
			return nil, fmt.Errorf("%s: the mask's grid %v is not the scan's %v", path, opt.Mask.Dims, dims)
		}
		mask, s.MaskRule = *opt.Mask, opt.MaskRule
		if s.MaskRule == "" {
			s.MaskRule = MaskRuleUser
		}
	} else if opt.MaskPath != "" {
		if mask, err = LoadMask(opt.MaskPath, h); err != nil {
			return nil, err
		}
		s.MaskRule = MaskRuleUser
	} else if int64(readUpTo(sel, L))*volBytes <= loadOnceLimit {
		return loadOnce(ctx, r, s, sel, opt, digests, rep)
	} else {
		mean, changing, err := meanImage(ctx, r, path, sel, L, nil, rep)
		if err != nil {
			return nil, err
		}
		s.BytesRead += int64(readUpTo(sel, L)) * volBytes
		if opt.Mean {
			s.Mean = toFloat32(mean)
		}
		var note string
		mask, s.MaskRule, note = AutoMask(mean, changing, dims, opt.LowerCutoff, opt.UpperCutoff)
		if mask.Count() == 0 {
			return nil, fmt.Errorf("%s: no voxel's signal changes over time: every series is constant, so there is nothing to correlate", path)
		}
		rep.Note(note)
		// gzip streams cannot rewind: the second pass reopens the file.
		r.Close()
		if r, err = nifti.Open(path); err != nil {
			return nil, err
		}
		s.Passes = 2
	}

	flat := make([]int32, 0, mask.Count())
	for f, in := range mask.In {
		if in {
			flat = append(flat, int32(f))
		}
	}
	N := len(flat)
	if N == 0 {
		return nil, fmt.Errorf("%s: no voxel in the mask %s", path, opt.MaskPath)
	}
	if opt.Mean && s.Mean == nil {
		sum = make([]float64, h.VoxelsPerVolume())
	}
	data := make([]float32, N*L)
	rep.Start("load", int64(L))
	// The mask is known: a .nii.gz of one gzip member that is small enough to hold is inflated
	// in one call (nifti.Reader.InflateAll, libdeflate) and the mask's series are converted
	// from it on every core, instead of streaming volume by volume.
	inMemory := false
	if sel == nil && int64(L)*volBytes <= loadOnceLimit {
		if vals, _ := r.InflateAll(nil); vals != nil {
			size := h.DataType.Size()
			(&kept{h: h, raw: vals}).series(data, flat, h.VoxelsPerVolume(), L, size)
			if sum != nil {
				addVolumes(sum, vals, &h, L)
			}
			s.BytesRead += int64(L) * volBytes
			rep.Add(int64(L))
			if err := ctx.Err(); err != nil {
				return nil, fmt.Errorf("load %s: %w", path, err)
			}
			inMemory = true
		}
	}
	if !inMemory {
		if err := streamSeries(ctx, r, s, data, flat, sum, sel, volBytes, rep); err != nil {
			return nil, err
		}
	}
	if sum != nil {
		for i := range sum {
			sum[i] /= float64(L)
		}
		s.Mean = toFloat32(sum)
	}

	kept, st := dropBadSeries(data, N, L)
	s.Dropped = DropStats{MaskVoxels: N, ZeroVariance: st.ZeroVariance, NonFinite: st.NonFinite}
	if len(kept) == 0 {
		return nil, fmt.Errorf("%s: every one of the %d voxels in the mask has a constant series or NaN/Inf values", path, N)
	}
	s.N = len(kept)
	s.Data = data[:s.N*L]
	s.IJK = make([][3]int32, s.N)
	s.Mask = Mask{Dims: dims, In: make([]bool, len(mask.In))}
	nx, ny := int32(dims[0]), int32(dims[1])
	for w, v := range kept {
		f := flat[v]
		s.IJK[w] = [3]int32{f % nx, (f / nx) % ny, f / (nx * ny)}
		s.Mask.In[f] = true
	}
	s.IndexGrid()
	for _, wait := range digests {
		d, err := wait()
		if err != nil {
			return nil, err
		}
		s.Inputs = append(s.Inputs, d)
	}
	noteDropped(rep, path, "mask voxels", s.Dropped)
	return s, nil
}

// streamSeries streams the L volumes of r (those sel names) into the node-major series of
// the grid voxels flat (data, N×L), through 16-volume blocks, and adds every grid voxel's
// values into sum when it is not nil.
func streamSeries(ctx context.Context, r *nifti.Reader, s *Scan, data []float32, flat []int32, sum []float64, sel []int, volBytes int64, rep progress.Reporter) error {
	path, N, L := s.Source, len(flat), s.L
	h := r.Header
	blk := make([]float32, scatterVolumes*N)
	vols := streamVolumes[float32](ctx, r, h.VoxelsPerVolume(), sel, L)
	defer vols.close() // runs before r.Close
	// The volumes passed over between the selected ones are read too.
	s.BytesRead += int64(readUpTo(sel, L)-L) * volBytes
	for t := 0; t < L; t++ {
		vol, err := nextVolume(ctx, vols, path, t, L)
		if err != nil {
			return err
		}
		s.BytesRead += volBytes
		b := t % scatterVolumes
		gatherMasked(blk[b*N:(b+1)*N], vol, flat)
		for i := range sum {
			sum[i] += float64(vol[i])
		}
		vols.release(vol)
		if b == scatterVolumes-1 || t == L-1 {
			scatterBlock(data, blk, N, L, t-b, b+1)
		}
		rep.Add(1)
	}
	vols.close()
	return nil
}

// addVolumes adds every grid voxel's L stored values (raw, volume-major), converted as
// ReadVolume converts them, to sum in float64, volume after volume as the stream adds them:
// voxel blocks on every core.
func addVolumes(sum []float64, raw []byte, h *nifti.Header, L int) {
	const block = 4096
	n, size := len(sum), h.DataType.Size()
	blocks := (n + block - 1) / block
	var next atomic.Int64
	var wg sync.WaitGroup
	for range min(runtime.GOMAXPROCS(0), blocks) {
		wg.Add(1)
		go func() {
			defer wg.Done()
			var vals [block]float32
			for {
				b0 := (int(next.Add(1)) - 1) * block
				if b0 >= n {
					return
				}
				b1 := min(b0+block, n)
				v, acc := vals[:b1-b0], sum[b0:b1]
				for t := 0; t < L; t++ {
					h.Decode(v, raw[(t*n+b0)*size:(t*n+b1)*size])
					for i, x := range v {
						acc[i] += float64(x)
					}
				}
			}
		}()
	}
	wg.Wait()
}

// loadOnceLimit bounds the stored data (all the volumes read, in the file's datatype) that
// Load keeps in memory to compute the automatic mask and take the series from one decoding of
// the file (loadOnce); a larger scan is read twice. A variable so that tests can compare both.
var loadOnceLimit int64 = KeepLimit

// loadOnce is Load with the automatic mask from one decoding of the file: the stored values
// of every grid voxel are kept (the W7 phantom's 130 MB of int16), the mean image, the mask
// and the usable series come from them (decodeStored, as a cohort's SurveyKeep), and the
// mask's series are converted from them. Reading a .nii.gz twice — the mean image's pass, then
// the series' pass, each inflating the whole stream — was most of a scan's load (BENCHMARKS.md,
// "Loading one scan"). base holds what the header gave (grid, TR, warnings, source); the
// scan is the one the two passes give, bit for bit (TestLoadOnceMatchesTwoPasses).
func loadOnce(ctx context.Context, r *nifti.Reader, base *Scan, sel []int, opt Options, digests []func() (FileDigest, error), rep progress.Reporter) (*Scan, error) {
	path := base.Source
	usable := make([]bool, r.Header.VoxelsPerVolume())
	for i := range usable {
		usable[i] = true
	}
	rep.Start("load", int64(base.L))
	st, err := decodeStored(ctx, r, path, sel, base.L, usable, nil, rep)
	if err != nil {
		return nil, err
	}
	mask, rule, note := AutoMask(st.mean, st.changing, base.Dims, opt.LowerCutoff, opt.UpperCutoff)
	if mask.Count() == 0 {
		return nil, fmt.Errorf("%s: no voxel's signal changes over time: every series is constant, so there is nothing to correlate", path)
	}
	rep.Note(note)
	sv := &Survey{Dims: base.Dims, Affine: base.Affine, TR: base.TR, L: base.L, Usable: usable, path: path,
		keep: &kept{h: r.Header, nonFinite: st.nonFinite, sel: sel, raw: st.raw}}
	s, err := sv.Load(ctx, &mask, rule)
	if err != nil {
		return nil, err
	}
	s.TRSource, s.Warnings = base.TRSource, base.Warnings
	if opt.Mean {
		s.Mean = toFloat32(st.mean)
	}
	for _, wait := range digests {
		d, err := wait()
		if err != nil {
			return nil, err
		}
		s.Inputs = append(s.Inputs, d)
	}
	noteDropped(rep, path, "mask voxels", s.Dropped)
	return s, nil
}

// meanImage is the first pass of the automatic mask: the voxel-wise mean over time, in
// float64 (as numpy's mean of integer data), streamed one volume at a time, and which voxels'
// series change over time (a finite value different from the first volume's), the voxels
// with signal that AutoMask weighs its rules against.
//
// usable, when not nil (one entry per grid voxel, all true on entry), is cleared for every voxel
// whose series Load would drop: a NaN or ±Inf, or the same value throughout, in float32 (the
// values ReadVolume gives are ReadVolume64's rounded to float32; dropBadSeries' test).
func meanImage(ctx context.Context, r *nifti.Reader, path string, sel []int, L int, usable []bool, rep progress.Reporter) ([]float64, []bool, error) {
	n := r.Header.VoxelsPerVolume()
	acc := newMeanAcc(n, usable)
	rep.Start("epi-mask", int64(L))
	vols := streamVolumes[float64](ctx, r, n, sel, L)
	defer vols.close()
	for t := 0; t < L; t++ {
		vol, err := nextVolume(ctx, vols, path, t, L)
		if err != nil {
			return nil, nil, err
		}
		acc.add(vol, t)
		vols.release(vol)
		rep.Add(1)
	}
	mean, changing := acc.finish(L)
	return mean, changing, nil
}

// meanAcc accumulates meanImage's statistics one float64 volume at a time.
type meanAcc struct {
	sum, first []float64
	changing   []bool
	usable     []bool // nil: not asked for
	varies     []bool
	nonFinite  []bool // with usable: a float32 value of the series is NaN or ±Inf
	first32    []float32
}

func newMeanAcc(n int, usable []bool) *meanAcc {
	a := &meanAcc{sum: make([]float64, n), first: make([]float64, n), changing: make([]bool, n), usable: usable}
	if usable != nil {
		a.varies, a.nonFinite, a.first32 = make([]bool, n), make([]bool, n), make([]float32, n)
	}
	return a
}

// add takes volume t (in order from 0).
func (a *meanAcc) add(vol []float64, t int) {
	sum, first, changing, usable := a.sum, a.first, a.changing, a.usable
	if t == 0 {
		copy(first, vol)
		for i := range a.first32 {
			y := float32(vol[i])
			a.first32[i] = y
			if y-y != 0 { // NaN or ±Inf
				usable[i] = false
				a.nonFinite[i] = true
			}
		}
	}
	if usable != nil {
		// One loop for all three (the volume is read once from memory): a value that
		// differs from the first is either non-finite (NaN never equals the first) or
		// makes the series vary.
		first32, varies := a.first32, a.varies
		for i, x := range vol {
			sum[i] += x
			f0 := first[i]
			if x != f0 && x-x == 0 && f0-f0 == 0 {
				changing[i] = true
			}
			if y := float32(x); y != first32[i] {
				if y-y != 0 {
					usable[i] = false
					a.nonFinite[i] = true
				} else {
					varies[i] = true
				}
			}
		}
		return
	}
	for i, x := range vol {
		sum[i] += x
		// NaN never equals itself: a series with NaN counts as changing only through
		// its finite values.
		if x != first[i] && x-x == 0 && first[i]-first[i] == 0 {
			changing[i] = true
		}
	}
}

// finish returns the mean of the L volumes added and which voxels change, and settles usable.
func (a *meanAcc) finish(L int) (mean []float64, changing []bool) {
	for i := range a.sum {
		a.sum[i] /= float64(L)
	}
	for i, v := range a.varies {
		a.usable[i] = a.usable[i] && v
	}
	return a.sum, a.changing
}

func toFloat32(x []float64) []float32 {
	out := make([]float32, len(x))
	for i, v := range x {
		out[i] = float32(v)
	}
	return out
}

// nextVolume takes volume t from the stream, checking for cancellation first so that a
// cancelled load stops within one volume.
func nextVolume[D float32 | float64](ctx context.Context, vols *volumeStream[D], path string, t, L int) ([]D, error) {
	if err := ctx.Err(); err != nil {
		return nil, fmt.Errorf("load %s: %w", path, err)
	}
	v, ok := vols.next()
	if !ok { // the producer saw the cancellation first
		err := ctx.Err()
		if err == nil {
			err = errors.New("volume stream stopped")
		}
		return nil, fmt.Errorf("load %s: %w", path, err)
	}
	if v.err != nil {
		return nil, volumeError(path, t, L, v.err)
	}
	return v.data, nil
}

func volumeError(path string, t, L int, err error) error {
	if errors.Is(err, io.EOF) {
		return fmt.Errorf("%s: the data end after %d of %d volumes", path, t, L)
	}
	var fe *nifti.FileError
	if errors.As(err, &fe) { // already names the file
		return fmt.Errorf("%w (volume %d of %d)", err, t+1, L)
	}
	return fmt.Errorf("%s: volume %d of %d: %w", path, t+1, L, err)
}

// gatherMasked copies the masked voxels of one volume, in node order.
func gatherMasked(dst, vol []float32, flat []int32) {
	for n, f := range flat {
		dst[n] = vol[f]
	}
}

// scatterBlock writes nb gathered volumes blk[b*n+v] (volumes t0..t0+nb) into the series of
// every node: data[v*l+t0+b]. Each node's nb values are contiguous in data, and the nb read
// streams advance together through blk, so every cache line touched is used whole.
func scatterBlock(data, blk []float32, n, l, t0, nb int) {
	for v := 0; v < n; v++ {
		row := data[v*l+t0 : v*l+t0+nb]
		for b := range row {
			row[b] = blk[b*n+v]
		}
	}
}

// LoadMask reads a user mask for a scan whose header is ref: a 3D NIfTI (or 4D with one
// volume) on the same grid, whose affine maps every voxel within 1e-3 mm of where ref's
// does. A voxel is in the mask when its value is finite and non-zero (NaN/Inf are treated
// as 0, as nilearn's load_mask_img does). An empty mask is an error.
func LoadMask(path string, ref nifti.Header) (Mask, error) {
	r, err := nifti.Open(path)
	if err != nil {
		return Mask{}, err
	}
	defer r.Close()
	h := r.Header
	if v := h.Volumes(); v != 1 {
		return Mask{}, fmt.Errorf("%s: a mask must be a 3D image; this one has %d volumes", path, v)
	}
	dims := [3]int{h.Nx(), h.Ny(), h.Nz()}
	want := [3]int{ref.Nx(), ref.Ny(), ref.Nz()}
	if dims != want {
		return Mask{}, fmt.Errorf("%s: mask grid %d×%d×%d differs from the scan's %d×%d×%d; resample the mask onto the scan first",
			path, dims[0], dims[1], dims[2], want[0], want[1], want[2])
	}
	if d := affineDistance(h.Affine(), ref.Affine(), dims); !(d <= 1e-3) {
		return Mask{}, fmt.Errorf("%s: mask affine places voxels up to %.4g mm away from the scan's (tolerance 0.001 mm); resample the mask onto the scan first", path, d)
	}
	vol := make([]float32, h.VoxelsPerVolume())
	if err := r.ReadVolume(vol); err != nil {
		return Mask{}, volumeError(path, 0, 1, err)
	}
	m := Mask{Dims: dims, In: make([]bool, len(vol))}
	empty := true
	for i, x := range vol {
		in := x != 0 && !math.IsNaN(float64(x)) && !math.IsInf(float64(x), 0)
		m.In[i] = in
		empty = empty && !in
	}
	if empty {
		return Mask{}, fmt.Errorf("%s: the mask is empty (no non-zero voxel)", path)
	}
	return m, nil
}

// affineDistance is the largest distance in mm between where the affines a and b put a
// voxel of the grid. The difference a − b is itself affine, so its largest norm over the
// grid's box is reached at one of the box's 8 corner voxels.
func affineDistance(a, b [4][4]float64, dims [3]int) float64 {
	worst := 0.0
	for c := 0; c < 8; c++ {
		var p [3]float64
		for ax := 0; ax < 3; ax++ {
			if c&(1<<ax) != 0 {
				p[ax] = float64(dims[ax] - 1)
			}
		}
		pa, pb := VoxelToWorld(a, p), VoxelToWorld(b, p)
		d := math.Sqrt((pa[0]-pb[0])*(pa[0]-pb[0]) + (pa[1]-pb[1])*(pa[1]-pb[1]) + (pa[2]-pb[2])*(pa[2]-pb[2]))
		if math.IsNaN(d) || d > worst {
			worst = d
		}
	}
	return worst
}

// SelectVolumes returns which of the file's volumes (in file order, counted from 0) make the
// time series, or nil when all of them do in order (a plain 4D image). It refuses images
// whose series is ambiguous: more than one non-spatial axis longer than 1 (a 5D image such as
// x×y×z×2×60 would otherwise stream as 120 volumes) unless the time axis is named (axis, 4
// to 7; 0 = 4) and every other non-spatial axis longer than 1 has its entry chosen in index
// (axis → entry, from 0: --index 4=1 takes the second of axis 4's two entries); a named time
// axis or chosen axis the image does not have, and an entry out of range. The volume of
// entries (i₄, i₅, i₆, i₇) lies at i₄ + n₄·(i₅ + n₅·(i₆ + n₆·i₇)) (NIfTI stores the first
// axis fastest), so the selected volumes come in increasing file order and stream in one pass.
func SelectVolumes(h *nifti.Header, axis int, index map[int]int) ([]int, error) {
	dims := h.Dim[1 : h.Dim[0]+1]
	if axis != 0 && (axis < 4 || axis > 7) {
		return nil, fmt.Errorf("time axis %d: the time axis is one of 4 to 7 (the NIfTI dimensions after x, y, z)", axis)
	}
	if axis > int(h.Dim[0]) {
		return nil, fmt.Errorf("time axis %d named, but the image has %d dimensions %v", axis, h.Dim[0], dims)
	}
	tAxis := max(axis, 4)
	for _, k := range slices.Sorted(maps.Keys(index)) {
		switch i := index[k]; {
		case k < 4 || k > 7:
			return nil, fmt.Errorf("--index %d=%d: the axis is one of 4 to 7 (the NIfTI dimensions after x, y, z)", k, i)
		case k == tAxis:
			return nil, fmt.Errorf("--index %d=%d: axis %d is the time axis; choose an entry of another axis", k, i, k)
		case k > int(h.Dim[0]):
			return nil, fmt.Errorf("--index %d=%d: the image has %d dimensions %v", k, i, h.Dim[0], dims)
		case i < 0 || int64(i) >= h.Dim[k]:
			return nil, fmt.Errorf("--index %d=%d: axis %d has %d entries (0 to %d)", k, i, k, h.Dim[k], h.Dim[k]-1)
		}
	}
	var long []int // non-spatial axes longer than 1
	for i := 4; i <= int(h.Dim[0]); i++ {
		if h.Dim[i] > 1 {
			long = append(long, i)
		}
	}
	for _, k := range long {
		if _, chosen := index[k]; k == tAxis || chosen {
			continue
		}
		if axis == 0 {
			return nil, fmt.Errorf("%dD image %v: its volumes lie along axis %v, not only axis 4; name the time axis with --time-axis N (4 to 7) and choose an entry of each other axis with --index AXIS=I",
				h.Dim[0], dims, long)
		}
		return nil, fmt.Errorf("%dD image %v: axis %d has %d entries besides the time axis %d; choose one with --index %d=I (0 to %d): HubScope reads one series per voxel",
			h.Dim[0], dims, k, h.Dim[k], tAxis, k, h.Dim[k]-1)
	}
	// Strides of the non-spatial axes in volumes, and the first selected volume.
	stride, base, n := [8]int{}, 0, 1
	for k := 4; k < 8; k++ {
		stride[k] = n
		if k <= int(h.Dim[0]) {
			base += index[k] * n
			n *= int(h.Dim[k])
		}
	}
	L := 1
	if tAxis <= int(h.Dim[0]) {
		L = int(h.Dim[tAxis])
	}
	if base == 0 && L == n {
		return nil, nil // every volume, in order
	}
	sel := make([]int, L)
	for t := range sel {
		sel[t] = base + t*stride[tAxis]
	}
	return sel, nil
}

// SelectionNote is the line that says which volumes of a 5D+ image make the series.
func SelectionNote(h *nifti.Header, axis int, index map[int]int, volumes int) string {
	var entries string
	for _, k := range slices.Sorted(maps.Keys(index)) {
		entries += fmt.Sprintf(", entry %d of axis %d", index[k], k)
	}
	return fmt.Sprintf("time series along axis %d of %dD image %v: %d volumes%s", max(axis, 4), h.Dim[0], h.Dim[1:h.Dim[0]+1], volumes, entries)
}

// timeAxisTR is the TR along a named time axis > 4 (pixdim[axis] in the header's time unit,
// with the rules nifti.Header.TR applies to axis 4), where it comes from, and the header's
// warnings with the time checks made on that axis.
func timeAxisTR(h nifti.Header, axis int) (float64, string, []nifti.Warning) {
	h.Dim[4], h.PixDim[4] = h.Dim[axis], h.PixDim[axis]
	pix := fmt.Sprintf("pixdim[%d]", axis)
	ws := h.Check()
	for i := range ws {
		ws[i].Field = strings.ReplaceAll(ws[i].Field, "pixdim[4]", pix)
		ws[i].Problem = strings.ReplaceAll(ws[i].Problem, "pixdim[4]", pix)
		ws[i].Fix = strings.ReplaceAll(ws[i].Fix, "pixdim[4]", pix)
	}
	return h.TR(), strings.ReplaceAll(h.TRSource(), "pixdim[4]", pix), ws
}
