package synth

import (
	"fmt"
	"math"

	"github.com/hubscope/hubscope/assets"
	"github.com/hubscope/hubscope/helper/nifti"
	"github.com/hubscope/hubscope/helper/scan"
)

// Paths of the embedded masks inside assets.Demo (licence: assets/demo/LICENSE-MNI152.txt).
const (
	// DefaultMaskAsset is the MNI152 2 mm brain mask (91×109×91, 228,483 voxels), the grid
	// phantoms are generated on by default: the shared data's file, gzipped.
	DefaultMaskAsset = "demo/MNI152_T1_2mm_brain_mask.nii.gz"
	// DemoMaskAsset is the same mask resampled by ResampleMask to 4 mm (46×55×46, 28,971 voxels).
	DemoMaskAsset = "demo/MNI152_T1_4mm_brain_mask.nii.gz"
)

// ResampleMask resamples a mask onto a grid of voxelMM-sized voxels covering the same box (the
// same outer faces at the grid's origin corner, ⌈n·size/voxelMM⌉ voxels per axis, axes
// oriented as the input's). A new voxel is in the mask when at least half of the source voxels
// that its sub-samples fall in are: exact majority for integer ratios (2 mm → 4 mm uses the 8
// source voxels a new voxel covers); nearest neighbour when upsampling.
//
// The new affine keeps the input's directions: column a is scaled by r_a = voxelMM/‖column a‖
// and the origin moves to the centre of the first new voxel, source voxel (r_a − 1)/2.
func ResampleMask(m scan.Mask, affine [4][4]float64, voxelMM float64) (scan.Mask, [4][4]float64) {
	var ratio [3]float64
	var dims [3]int
	var sub [3]int
	for a := range 3 {
		size := math.Sqrt(affine[0][a]*affine[0][a] + affine[1][a]*affine[1][a] + affine[2][a]*affine[2][a])
		ratio[a] = voxelMM / size
		dims[a] = max(1, int(math.Ceil(float64(m.Dims[a])/ratio[a]-1e-9)))
		sub[a] = max(1, int(math.Ceil(ratio[a]-1e-9)))
	}
	out := affine
	for r := range 3 {
		for a := range 3 {
			out[r][a] = affine[r][a] * ratio[a]
		}
		out[r][3] = affine[r][3]
		for a := range 3 {
			out[r][3] += affine[r][a] * (ratio[a] - 1) / 2
		}
	}

	// Source coordinate of sub-sample q of new voxel I along axis a: the new voxel spans source
	// coordinates [I·r − ½, (I+1)·r − ½); the sub-samples sit at the centres of its sub equal parts.
	coord := func(a, I, q int) int {
		c := (float64(I)+(float64(q)+0.5)/float64(sub[a]))*ratio[a] - 0.5
		return int(math.Floor(c + 0.5))
	}
	res := scan.Mask{Dims: dims, In: make([]bool, dims[0]*dims[1]*dims[2])}
	total := sub[0] * sub[1] * sub[2]
	for K := 0; K < dims[2]; K++ {
		for J := 0; J < dims[1]; J++ {
			for I := 0; I < dims[0]; I++ {
				in := 0
				for qk := 0; qk < sub[2]; qk++ {
					k := coord(2, K, qk)
					if k < 0 || k >= m.Dims[2] {
						continue
					}
					for qj := 0; qj < sub[1]; qj++ {
						j := coord(1, J, qj)
						if j < 0 || j >= m.Dims[1] {
							continue
						}
						for qi := 0; qi < sub[0]; qi++ {
							i := coord(0, I, qi)
							if i >= 0 && i < m.Dims[0] && m.In[m.Flat(i, j, k)] {
								in++
							}
						}
					}
				}
				res.In[res.Flat(I, J, K)] = 2*in >= total
			}
		}
	}
	return res, out
}

// ReadMask reads a 3D image and returns the voxels whose value exceeds threshold (0 for a binary
// mask), with the image's affine.
func ReadMask(path string, threshold float64) (scan.Mask, [4][4]float64, error) {
	h, data, err := nifti.ReadImage(path)
	if err != nil {
		return scan.Mask{}, [4][4]float64{}, err
	}
	return maskOf(path, h, data, threshold)
}

// maskOf is ReadMask's mask of a read image.
func maskOf(path string, h nifti.Header, data []float32, threshold float64) (scan.Mask, [4][4]float64, error) {
	if h.Volumes() != 1 {
		return scan.Mask{}, [4][4]float64{}, fmt.Errorf("%s: %d volumes where a 3D mask is needed", path, h.Volumes())
	}
	m := scan.Mask{Dims: [3]int{h.Nx(), h.Ny(), h.Nz()}, In: make([]bool, len(data))}
	for i, x := range data {
		m.In[i] = float64(x) > threshold
	}
	if m.Count() == 0 {
		return scan.Mask{}, [4][4]float64{}, fmt.Errorf("%s: no voxel above %g: empty mask", path, threshold)
	}
	return m, h.Affine(), nil
}

// GreyMatterMask turns a grey-matter probability map (such as the 1 mm ICBM 2009a map, which
// gives about 1.5·10⁶ voxels) into a mask as nilearn's load_mni152_gm_mask does: voxels above
// threshold × the map's maximum (nilearn: 0.2), then a binary closing with two iterations of the
// 6-connected cross to fill pin-holes.
func GreyMatterMask(path string, threshold float64) (scan.Mask, [4][4]float64, error) {
	h, data, err := nifti.ReadImage(path)
	if err != nil {
		return scan.Mask{}, [4][4]float64{}, err
	}
	if h.Volumes() != 1 {
		return scan.Mask{}, [4][4]float64{}, fmt.Errorf("%s: %d volumes where a 3D probability map is needed", path, h.Volumes())
	}
	peak := math.Inf(-1)
	for _, x := range data {
		if float64(x) > peak {
			peak = float64(x)
		}
	}
	if !(peak > 0) || math.IsInf(peak, 0) {
		return scan.Mask{}, [4][4]float64{}, fmt.Errorf("%s: maximum %g: not a probability map", path, peak)
	}
	m := scan.Mask{Dims: [3]int{h.Nx(), h.Ny(), h.Nz()}, In: make([]bool, len(data))}
	for i, x := range data {
		m.In[i] = float64(x) > threshold*peak
	}
	return BinaryClosing(m, 2), h.Affine(), nil
}

// BinaryClosing is dilation then erosion, each repeated iterations times, with the 6-connected
// cross as structuring element and the outside of the grid counted as background — the same as
// scipy.ndimage.binary_closing(mask, iterations=iterations).
func BinaryClosing(m scan.Mask, iterations int) scan.Mask {
	cur := m.In
	for range iterations {
		cur = morph(m.Dims, cur, true)
	}
	for range iterations {
		cur = morph(m.Dims, cur, false)
	}
	return scan.Mask{Dims: m.Dims, In: cur}
}

// morph is one dilation (a voxel is set if it or a face neighbour is) or erosion (a voxel stays
// set only if it and all six face neighbours are, neighbours outside the grid being unset).
func morph(d [3]int, in []bool, dilate bool) []bool {
	out := make([]bool, len(in))
	nx, ny, nz := d[0], d[1], d[2]
	sy, sz := nx, nx*ny // flat-index strides of j and k
	for k := 0; k < nz; k++ {
		for j := 0; j < ny; j++ {
			row := sy*j + sz*k
			for i := 0; i < nx; i++ {
				f := row + i
				// Face neighbours in −i, +i, −j, +j, −k, +k order; outside the grid counts as unset.
				nb := [6]bool{
					i > 0 && in[f-1], i < nx-1 && in[f+1],
					j > 0 && in[f-sy], j < ny-1 && in[f+sy],
					k > 0 && in[f-sz], k < nz-1 && in[f+sz],
				}
				v := in[f]
				if dilate {
					for _, x := range nb {
						v = v || x
					}
				} else {
					for _, x := range nb {
						v = v && x
					}
				}
				out[f] = v
			}
		}
	}
	return out
}

// DemoMask returns the embedded demo mask (MNI152 brain mask at 4 mm) and its affine, so that
// the demo runs with no data files present.
func DemoMask() (scan.Mask, [4][4]float64, error) { return embeddedMask(DemoMaskAsset) }

// DefaultMask returns the embedded MNI152 2 mm brain mask and its affine: the default grid of
// phantoms (ResampleMask it to 3 or 4 mm for smaller ones).
func DefaultMask() (scan.Mask, [4][4]float64, error) { return embeddedMask(DefaultMaskAsset) }

// embeddedMask reads a mask shipped in assets.Demo.
func embeddedMask(name string) (scan.Mask, [4][4]float64, error) {
	// Read in place from the embedded files: a copy in a temporary folder was left behind
	// when the process was killed while reading it.
	h, data, err := nifti.ReadImageFS(assets.Demo, name)
	if err != nil {
		return scan.Mask{}, [4][4]float64{}, fmt.Errorf("embedded mask: %w", err)
	}
	return maskOf(name, h, data, 0)
}
