package scan

import (
	"context"
	"fmt"
	"math"
	"runtime"
	"sync"
	"sync/atomic"
	"unsafe"

	"github.com/hubscope/hubscope/helper/nifti"
	"github.com/hubscope/hubscope/helper/progress"
)

// KeepLimit bounds the stored data of one scan (all its volumes, in the file's datatype) that
// SurveyKeep decodes into memory at once: a larger scan is surveyed as SurveyScan does and
// read again by Survey.Load. 512 MiB holds 200 int16 volumes of the 2 mm MNI grid (361 MB).
const KeepLimit = 512 << 20

// Scratch is one loading goroutine's reusable memory for SurveyKeep: the scan's stored volumes
// and one float64 volume. Reusing it from subject to subject saves allocating (and collecting)
// a whole scan per subject.
type Scratch struct {
	raw []byte
	vol []float64
}

// kept is what SurveyKeep keeps of a scan for Survey.Load: the stored values of the voxels in
// its mask with usable series, volume-major, and what Load would report besides the series.
type kept struct {
	h         nifti.Header
	flat      []int32 // grid voxels kept, increasing
	raw       []byte  // L × len(flat) values: stored datatype, or float32 when f32
	f32       bool    // raw holds float32 values already scaled (stored types of 8 bytes)
	nonFinite []bool  // grid voxels whose series has a NaN or ±Inf (in float32)
	sel       []int
	trSource  string
	warnings  []nifti.Warning
	inputs    []FileDigest
}

// SurveyKeep is SurveyScan that decodes the file once for good: besides the survey it keeps
// the series of the voxels in the scan's mask that have usable series, in the file's stored
// datatype (2 bytes a value for int16, the usual type of fMRI), so that Survey.Load can give
// the scan Load would give without inflating and decoding the file again. A cohort's loader
// needs every subject's mask before it knows the common nodes; decoding twice (survey, then
// read) cost about half of its time.
//
// Memory: while it runs, all the scan's stored volumes (scratch, reused) and a few float64
// volumes; afterwards the kept series (KeptBytes). Scans whose stored data exceed KeepLimit
// are surveyed without keeping anything. The file is hashed beside the decoding (Scan.Inputs),
// as Load does.
func SurveyKeep(ctx context.Context, path, maskPath string, scratch *Scratch) (*Survey, error) {
	sv, all, err := surveyDecode(ctx, path, maskPath, scratch)
	if err != nil || all == nil {
		return sv, err
	}
	// Keep the voxels of the mask with usable series, in the stored type (8-byte types as the
	// float32 values Load gives).
	k := *all
	k.flat, k.raw = nil, nil
	for f, in := range sv.Mask.In {
		if in && sv.Usable[f] {
			k.flat = append(k.flat, int32(f))
		}
	}
	n, size, L := len(sv.Usable), all.h.DataType.Size(), sv.L
	vb, K := n*size, len(k.flat)
	raw := all.raw
	if size == 8 {
		k.f32 = true
		k.raw = make([]byte, L*K*4)
		tmp := make([]byte, K*8)
		for t := 0; t < L; t++ {
			gatherValues(values[uint64](tmp), values[uint64](raw[t*vb:(t+1)*vb]), k.flat)
			k.h.Decode(values[float32](k.raw[t*K*4:(t+1)*K*4]), tmp)
		}
	} else {
		k.raw = make([]byte, L*K*size)
		for t := 0; t < L; t++ {
			gatherRaw(k.raw[t*K*size:(t+1)*K*size], raw[t*vb:(t+1)*vb], k.flat, size)
		}
	}
	sv.keep = &k
	return sv, nil
}

// SurveyRead is SurveyKeep followed by Survey.Load with the scan's own mask, without keeping
// anything: the survey and the scan Load gives, from one decoding of the file. Memory: the
// scan's stored volumes (scratch) while it runs.
func SurveyRead(ctx context.Context, path, maskPath string, scratch *Scratch) (*Survey, *Scan, error) {
	sv, all, err := surveyDecode(ctx, path, maskPath, scratch)
	if err != nil {
		return nil, nil, err
	}
	sv.keep = all // nil when the scan was too large to hold: Load reads it again
	s, err := sv.Load(ctx, &sv.Mask, sv.MaskRule)
	sv.Release()
	if err != nil {
		return nil, nil, err
	}
	return sv, s, nil
}

// surveyDecode surveys the scan from one decoding of its file and returns, besides the
// survey, every voxel's stored values (flat nil), in scratch, valid until scratch is used
// again; nil (and a survey by SurveyScan) when they exceed KeepLimit.
func surveyDecode(ctx context.Context, path, maskPath string, scratch *Scratch) (*Survey, *kept, error) {
	r, err := nifti.Open(path)
	if err != nil {
		return nil, nil, err
	}
	defer r.Close()
	h := r.Header
	sv, sel, err := surveyHeader(&h, path, maskPath)
	if err != nil {
		return nil, nil, err
	}
	L := sv.L
	n, size := h.VoxelsPerVolume(), h.DataType.Size()
	if int64(readUpTo(sel, L))*int64(n)*int64(size) > KeepLimit || n > math.MaxInt32 {
		r.Close()
		sv, err := SurveyScan(ctx, path, maskPath)
		return sv, nil, err
	}
	dctx, cancel := context.WithCancel(ctx)
	defer cancel()
	digests := []func() (FileDigest, error){digestAsync(dctx, path)}
	if maskPath != "" {
		digests = append(digests, digestAsync(dctx, maskPath))
	}
	sv.Usable = make([]bool, n)
	for i := range sv.Usable {
		sv.Usable[i] = true
	}
	st, err := decodeStored(ctx, r, path, sel, L, sv.Usable, scratch, nil)
	if err != nil {
		return nil, nil, err
	}
	mean, changing := st.mean, st.changing
	if maskPath != "" {
		if sv.Mask, err = LoadMask(maskPath, h); err != nil {
			return nil, nil, err
		}
		sv.MaskRule = MaskRuleUser
	} else {
		sv.Mask, sv.MaskRule, sv.Note = AutoMask(mean, changing, sv.Dims, 0, 0)
		if sv.Mask.Count() == 0 {
			return nil, nil, fmt.Errorf("%s: no voxel's signal changes over time: every series is constant, so there is nothing to correlate", path)
		}
	}
	k := &kept{h: h, nonFinite: st.nonFinite, sel: sel, trSource: h.TRSource(), warnings: r.Warnings, raw: st.raw}
	for _, wait := range digests {
		d, err := wait()
		if err != nil {
			return nil, nil, err
		}
		k.inputs = append(k.inputs, d)
	}
	return sv, k, nil
}

// stored is what decodeStored gives: every grid voxel's stored values of the L volumes
// (volume-major, in scratch) and meanImage's statistics of them.
type stored struct {
	raw       []byte
	mean      []float64
	changing  []bool
	nonFinite []bool // grid voxels whose series has a NaN or ±Inf (in float32)
}

// decodeStored decodes the L volumes of r that sel names (nil: the first L) once, in the
// stored datatype, into scratch, and computes meanImage's mean and changing flags from them;
// usable (one entry per grid voxel, all true on entry) is cleared as meanImage clears it. rep
// (may be nil) gets one unit per volume. Errors name the file.
func decodeStored(ctx context.Context, r *nifti.Reader, path string, sel []int, L int, usable []bool, scratch *Scratch, rep progress.Reporter) (*stored, error) {
	rep = progress.OrDiscard(rep)
	h := r.Header
	n, size := h.VoxelsPerVolume(), h.DataType.Size()
	if scratch == nil {
		scratch = &Scratch{}
	}
	vb := n * size
	var raw []byte
	// A .nii.gz of one gzip member is inflated in one call where the build can (libdeflate:
	// nifti.Reader.InflateAll), 2–2.5× the stream's rate; the inflated file is scratch's buffer.
	if sel == nil && int64(h.Volumes())*int64(vb) <= KeepLimit {
		if vals, all := r.InflateAll(scratch.raw[:cap(scratch.raw)]); vals != nil {
			scratch.raw, raw = all, vals
			if uintptr(unsafe.Pointer(&raw[0]))%8 != 0 {
				// vox_offset is not a multiple of 8: values() needs aligned values.
				raw = append(make([]byte, 0, len(raw)), raw...)
			}
		}
	}
	inMemory := raw != nil
	if !inMemory {
		if cap(scratch.raw) < L*vb {
			scratch.raw = nil // let the old one go before the new one is made
			scratch.raw = make([]byte, L*vb)
		}
		raw = scratch.raw[:L*vb]
	}
	// Small unscaled integers (int16, the usual type of fMRI) are summed as integers from the
	// stored volumes once all are in, a block of voxels at a time (the block's sums stay in
	// cache): the same means as float64 sums (exact either way), and their float32 values
	// differ exactly when the integers do. Other types go volume by volume through float64.
	dt := h.DataType
	small := !h.Scaled() && (dt == nifti.Int16 || dt == nifti.Uint16 || dt == nifti.Int8 || dt == nifti.Uint8)
	var acc *meanAcc
	if !small {
		acc = newMeanAcc(n, usable)
		if len(scratch.vol) != n {
			scratch.vol = make([]float64, n)
		}
	}
	each := func(t int) {
		if !small {
			h.Decode64(scratch.vol, raw[t*vb:(t+1)*vb])
			acc.add(scratch.vol, t)
		}
		rep.Add(1)
	}
	if inMemory {
		for t := 0; t < L; t++ {
			if err := ctx.Err(); err != nil {
				return nil, fmt.Errorf("load %s: %w", path, err)
			}
			each(t)
		}
	} else if err := streamStored(ctx, r, path, sel, L, raw, each); err != nil {
		return nil, err
	}
	var mean []float64
	var changing, nonFinite []bool
	switch {
	case !small:
		mean, changing = acc.finish(L)
		nonFinite = acc.nonFinite
	case dt == nifti.Int16:
		mean, changing = intStats(values[int16](raw), n, L)
	case dt == nifti.Uint16:
		mean, changing = intStats(values[uint16](raw), n, L)
	case dt == nifti.Int8:
		mean, changing = intStats(values[int8](raw), n, L)
	default:
		mean, changing = intStats(raw, n, L)
	}
	if small {
		copy(usable, changing) // integers are finite; a series varies where it changes
		nonFinite = make([]bool, n)
	}
	return &stored{raw: raw, mean: mean, changing: changing, nonFinite: nonFinite}, nil
}

// streamStored reads the stored values of the L volumes of r that sel names (nil: the first
// L) into raw (L volumes), inflating on its own goroutine, and calls each(t) for volume t as
// soon as it is in: inflating the next volume overlaps the caller's work on the last one.
func streamStored(ctx context.Context, r *nifti.Reader, path string, sel []int, L int, raw []byte, each func(t int)) error {
	vb := len(raw) / L
	// Inflating the next volume (the producer) overlaps summing the last one.
	ready := make(chan error, L)
	stop := make(chan struct{})
	done := make(chan struct{})
	go func() {
		defer close(done)
		var skip []byte
		file := 0
		for t := 0; t < L; t++ {
			select {
			case <-stop:
				return
			case <-ctx.Done():
				return
			default:
			}
			var err error
			for read := true; read; {
				dst := raw[t*vb : (t+1)*vb]
				if sel != nil && file < sel[t] {
					if skip == nil {
						skip = make([]byte, vb)
					}
					dst = skip // passed over: a gzip stream cannot skip ahead
				}
				err = r.ReadRawVolume(dst)
				read = sel != nil && err == nil && file < sel[t]
				file++
			}
			select {
			case ready <- err:
			case <-stop:
				return
			}
			if err != nil {
				return
			}
		}
	}()
	defer func() { close(stop); <-done }()
	for t := 0; t < L; t++ {
		var err error
		select {
		case err = <-ready:
		case <-ctx.Done():
			err = ctx.Err()
		}
		if err == nil {
			err = ctx.Err()
		}
		if err != nil {
			if ctx.Err() != nil {
				return fmt.Errorf("load %s: %w", path, ctx.Err())
			}
			return volumeError(path, t, L, err)
		}
		each(t)
	}
	return nil
}

// intStats is meanImage's mean and changing flags for n voxels × L volumes of small
// integers, volume-major: the integer sum over time divided by L (what the float64 sum gives:
// every partial sum is an integer below 2⁵³), and whether a value differs from the first.
func intStats[T int8 | uint8 | int16 | uint16](v []T, n, L int) ([]float64, []bool) {
	mean, changing := make([]float64, n), make([]bool, n)
	const block = 2048
	blocks := (n + block - 1) / block
	var next atomic.Int64
	var wg sync.WaitGroup
	// Blocks of voxels on every core: each block's sums and flags are its own.
	for range min(runtime.GOMAXPROCS(0), blocks) {
		wg.Add(1)
		go func() {
			defer wg.Done()
			var sum [block]int64
			for {
				b0 := (int(next.Add(1)) - 1) * block
				if b0 >= n {
					return
				}
				b1 := min(b0+block, n)
				s, ch, first := sum[:b1-b0], changing[b0:b1], v[b0:b1]
				clear(s)
				for t := 0; t < L; t++ {
					row := v[t*n+b0 : t*n+b1]
					row = row[:len(s)]
					for i, x := range row {
						s[i] += int64(x)
						ch[i] = ch[i] || x != first[i]
					}
				}
				for i, x := range s {
					mean[b0+i] = float64(x) / float64(L)
				}
			}
		}()
	}
	wg.Wait()
	return mean, changing
}

// values reinterprets bytes as fixed-size values (b from make([]byte), so aligned for them).
func values[T int8 | int16 | uint16 | uint32 | uint64 | float32](b []byte) []T {
	if len(b) == 0 {
		return nil
	}
	var zero T
	return unsafe.Slice((*T)(unsafe.Pointer(&b[0])), len(b)/int(unsafe.Sizeof(zero)))
}

func gatherValues[T uint8 | uint16 | uint32 | uint64](dst, src []T, flat []int32) {
	for k, f := range flat {
		dst[k] = src[f]
	}
}

// gatherRaw copies the size-byte values src[flat[k]] to dst[k].
func gatherRaw(dst, src []byte, flat []int32, size int) {
	switch size {
	case 1:
		gatherValues(dst, src, flat)
	case 2:
		gatherValues(values[uint16](dst), values[uint16](src), flat)
	case 4:
		gatherValues(values[uint32](dst), values[uint32](src), flat)
	case 8:
		gatherValues(values[uint64](dst), values[uint64](src), flat)
	}
}

// seriesTile is how many nodes' series one worker of kept.series fills at a time: their
// rows of the N×L matrix (256 × L floats, 200 KB at L = 200) stay in cache while the L volumes
// pass, so each written line is used whole, without the 16-volume blocks that the stream's
// volume-at-a-time order needs (scatterBlock).
const seriesTile = 256

// series writes node v's series, value idx[v] of each of the L kept volumes (K values of size
// bytes each), converted as Load converts them, into data[v·L : (v+1)·L]: node tiles on every
// core, each converting its nodes' values volume after volume.
func (k *kept) series(data []float32, idx []int32, K, L, size int) {
	N := len(idx)
	tiles := (N + seriesTile - 1) / seriesTile
	var next atomic.Int64
	var wg sync.WaitGroup
	for range min(runtime.GOMAXPROCS(0), tiles) {
		wg.Add(1)
		go func() {
			defer wg.Done()
			sub := make([]byte, seriesTile*size)
			vals := make([]float32, seriesTile)
			for {
				tl := int(next.Add(1)) - 1
				if tl >= tiles {
					return
				}
				v0, v1 := tl*seriesTile, min(tl*seriesTile+seriesTile, N)
				n := v1 - v0
				for t := 0; t < L; t++ {
					raw := k.raw[t*K*size : (t+1)*K*size]
					gatherRaw(sub[:n*size], raw, idx[v0:v1], size)
					if k.f32 {
						copy(vals[:n], values[float32](sub[:n*4]))
					} else {
						k.h.Decode(vals[:n], sub[:n*size])
					}
					for i, x := range vals[:n] {
						data[(v0+i)*L+t] = x
					}
				}
			}
		}()
	}
	wg.Wait()
}

// KeptBytes is the memory SurveyKeep's kept series hold (0 once released, or when nothing was
// kept).
func (sv *Survey) KeptBytes() int64 {
	if sv.keep == nil {
		return 0
	}
	return int64(len(sv.keep.raw))
}

// Release drops the kept series: Load then reads the file again.
func (sv *Survey) Release() { sv.keep = nil }

// Load gives the scan that Load(path, Options{Mask: mask, MaskRule: rule, MaskPath: the
// survey's mask file}) gives — the same nodes, series, mask, drop counts, header facts and
// file digests — from the series SurveyKeep kept when they cover every voxel of mask with a
// usable series (a subset of the scan's own mask: always for the intersection of masks or a
// mask file), and otherwise by reading the file again.
func (sv *Survey) Load(ctx context.Context, mask *Mask, rule string) (*Scan, error) {
	opt := Options{Mask: mask, MaskRule: rule, MaskPath: sv.maskPath}
	k := sv.keep
	if k == nil || mask == nil {
		return Load(ctx, sv.path, opt, nil)
	}
	if err := ctx.Err(); err != nil {
		return nil, fmt.Errorf("load %s: %w", sv.path, err)
	}
	if mask.Dims != sv.Dims || len(mask.In) != len(sv.Usable) {
		return nil, fmt.Errorf("%s: the mask's grid %v is not the scan's %v", sv.path, mask.Dims, sv.Dims)
	}
	// Node v is kept value idx[v] of every volume.
	var idx []int32
	drop := DropStats{}
	j := 0
	for f, in := range mask.In {
		if !in {
			continue
		}
		drop.MaskVoxels++
		switch {
		case k.nonFinite[f]:
			drop.NonFinite++
			continue
		case !sv.Usable[f]:
			drop.ZeroVariance++
			continue
		}
		if k.flat == nil { // every voxel's values
			idx = append(idx, int32(f))
			continue
		}
		for j < len(k.flat) && int(k.flat[j]) < f {
			j++
		}
		if j == len(k.flat) || int(k.flat[j]) != f {
			return Load(ctx, sv.path, opt, nil) // a voxel outside the scan's own mask
		}
		idx = append(idx, int32(j))
	}
	if drop.MaskVoxels == 0 {
		return nil, fmt.Errorf("%s: no voxel in the mask %s", sv.path, sv.maskPath)
	}
	N, L, K := len(idx), sv.L, len(k.flat)
	if k.flat == nil {
		K = len(sv.Usable)
	}
	if N == 0 {
		return nil, fmt.Errorf("%s: every one of the %d voxels in the mask has a constant series or NaN/Inf values", sv.path, drop.MaskVoxels)
	}
	s := &Scan{N: N, L: L, Dims: sv.Dims, Affine: sv.Affine, TR: sv.TR, TRSource: k.trSource, Warnings: k.warnings,
		Source: sv.path, Passes: 1, MaskRule: rule, Dropped: drop, Inputs: k.inputs}
	if s.MaskRule == "" {
		s.MaskRule = MaskRuleUser
	}
	s.BytesRead = int64(readUpTo(k.sel, L)) * int64(len(sv.Usable)) * int64(k.h.DataType.Size())
	size := k.h.DataType.Size()
	if k.f32 {
		size = 4
	}
	s.Data = make([]float32, N*L)
	k.series(s.Data, idx, K, L, size)
	s.IJK = make([][3]int32, N)
	s.Mask = Mask{Dims: sv.Dims, In: make([]bool, len(mask.In))}
	nx, ny := int32(sv.Dims[0]), int32(sv.Dims[1])
	for v, i := range idx {
		f := i
		if k.flat != nil {
			f = k.flat[i]
		}
		s.IJK[v] = [3]int32{f % nx, (f / nx) % ny, f / (nx * ny)}
		s.Mask.In[f] = true
	}
	s.IndexGrid()
	return s, nil
}
