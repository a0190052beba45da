package scan

import (
	"fmt"
	"math"
	"sort"

	"github.com/hubscope/hubscope/helper/nifti"
)

// MinTimePoints is the shortest series a network can be built from: a correlation of two
// points is always ±1 (fc refuses L < 3 too).
const MinTimePoints = 3

// Scan is a masked resting-state scan: N nodes (voxels or regions) × L time points.
type Scan struct {
	Data   []float32     // N×L row-major: series of node v is Data[v*L:(v+1)*L]
	N, L   int           // nodes, time points
	IJK    [][3]int32    // voxel position of node v (nil for a plain matrix input)
	Dims   [3]int        // grid size (zero for a plain matrix)
	Affine [4][4]float64 // voxel ijk → world mm
	TR     float64       // repetition time in seconds (0 when unknown)
	// TRSource says where TR comes from, in words (the header's value and unit, what was
	// assumed, or why it is unknown), for the summary and provenance.
	TRSource string
	// Warnings are the header oddities the reader worked around (nifti.Header.Check);
	// nil for plain matrices and clean headers.
	Warnings []nifti.Warning
	Source   string // input path
	Mask     Mask   // final mask after dropping bad voxels (grid-sized; empty for a plain matrix)
	Dropped  DropStats
	// MaskRule says how the mask was chosen: MaskRuleUser, or the automatic rule AutoMask
	// took (empty for a plain matrix).
	MaskRule string
	Labels   []string // node names for plain matrices (nil for images)
	// Mean is the temporal mean of every voxel of the grid (Dims, i fastest), computed in
	// float64 and rounded once; only with Options.Mean and for images (nil otherwise).
	Mean []float32
	// BytesRead is the amount of image data decoded while loading (for throughput reports):
	// the stored bytes of every volume read, counted once per pass (the automatic EPI mask
	// reads a scan over KeepLimit twice), or the file's data bytes for a plain matrix.
	BytesRead int64
	// Passes is how many times the input was read (2 with the automatic EPI mask of a scan
	// whose stored data exceed KeepLimit).
	Passes int
	// Inputs identify the files named by the caller, by size and SHA-256 of their bytes on
	// disk (compressed bytes for .gz), for provenance: the scan (the path given to Load)
	// first, then the user mask (Options.MaskPath) when one was given. For a .hdr/.img pair
	// only the named file is hashed, as provenance.json has always recorded. The digests are
	// computed while loading: a plain matrix passes through the hash as it is parsed (read
	// once, trailing bytes included); a NIfTI file is hashed on a goroutine beside the
	// volume stream (see digestAsync).
	Inputs []FileDigest

	// nodeOf is the dense grid → node index (−1 outside the network), built by IndexGrid.
	nodeOf []int32
}

// Mask marks the voxels of a grid that become nodes. Voxel (i, j, k) is In[i + Nx*(j + Ny*k)]
// (NIfTI's storage order, i fastest); nodes are numbered in increasing flat index.
type Mask struct {
	Dims [3]int
	In   []bool
}

// Count is the number of voxels in the mask.
func (m Mask) Count() int {
	n := 0
	for _, in := range m.In {
		if in {
			n++
		}
	}
	return n
}

// Flat is the flat grid index of voxel (i, j, k).
func (m Mask) Flat(i, j, k int) int { return i + m.Dims[0]*(j+m.Dims[1]*k) }

// DropStats says how many voxels of the mask were left out of the network, and why.
type DropStats struct {
	MaskVoxels   int // voxels in the mask before dropping
	ZeroVariance int // constant series: correlation undefined
	NonFinite    int // series with NaN or ±Inf
}

// Series returns the time series of node v.
func (s *Scan) Series(v int) []float32 { return s.Data[v*s.L : (v+1)*s.L] }

// VoxelToWorld maps voxel coordinates to world mm through the affine.
func VoxelToWorld(a [4][4]float64, ijk [3]float64) [3]float64 {
	var w [3]float64
	for r := 0; r < 3; r++ {
		w[r] = a[r][0]*ijk[0] + a[r][1]*ijk[1] + a[r][2]*ijk[2] + a[r][3]
	}
	return w
}

// World returns the world coordinates (mm) of node v's voxel.
func (s *Scan) World(v int) [3]float64 {
	p := s.IJK[v]
	return VoxelToWorld(s.Affine, [3]float64{float64(p[0]), float64(p[1]), float64(p[2])})
}

// IndexGrid builds the dense grid → node index that makes NodeAt O(1): one int32 per grid
// voxel (4 bytes × Nx·Ny·Nz, e.g. 3.6 MB for the 2 mm MNI grid). Load calls it; code that
// assembles a Scan by hand may call it once after filling IJK and Dims. It must not run
// concurrently with NodeAt.
func (s *Scan) IndexGrid() {
	n := s.Dims[0] * s.Dims[1] * s.Dims[2]
	if n == 0 || len(s.IJK) == 0 {
		s.nodeOf = nil
		return
	}
	idx := make([]int32, n)
	for i := range idx {
		idx[i] = -1
	}
	for v, p := range s.IJK {
		idx[int(p[0])+s.Dims[0]*(int(p[1])+s.Dims[1]*int(p[2]))] = int32(v)
	}
	s.nodeOf = idx
}

// NodeAt returns the node index of voxel (i, j, k), and false when the voxel is outside the
// grid or not a node. Without IndexGrid it falls back to a binary search over IJK, which
// relies on HubScope's node order (increasing flat index i + Nx·(j + Ny·k)).
func (s *Scan) NodeAt(i, j, k int) (int, bool) {
	nx, ny, nz := s.Dims[0], s.Dims[1], s.Dims[2]
	if i < 0 || j < 0 || k < 0 || i >= nx || j >= ny || k >= nz {
		return 0, false
	}
	flat := i + nx*(j+ny*k)
	if s.nodeOf != nil {
		v := s.nodeOf[flat]
		return int(v), v >= 0
	}
	v := sort.Search(len(s.IJK), func(v int) bool {
		p := s.IJK[v]
		return int(p[0])+nx*(int(p[1])+ny*int(p[2])) >= flat
	})
	if v < len(s.IJK) {
		p := s.IJK[v]
		if int(p[0]) == i && int(p[1]) == j && int(p[2]) == k {
			return v, true
		}
	}
	return 0, false
}

// WorldToVoxel maps world mm to (fractional) voxel coordinates by solving A·ijk + t = xyz
// with the affine's 3×3 part A (Cramer's rule). It fails when A is singular: a determinant
// below 1e-12 of the product of its column norms (Hadamard's bound), i.e. voxel axes that are
// degenerate or parallel.
func WorldToVoxel(a [4][4]float64, xyz [3]float64) ([3]float64, error) {
	m := [3][3]float64{
		{a[0][0], a[0][1], a[0][2]},
		{a[1][0], a[1][1], a[1][2]},
		{a[2][0], a[2][1], a[2][2]},
	}
	det := det3(m)
	bound := 1.0
	for c := 0; c < 3; c++ {
		bound *= math.Sqrt(m[0][c]*m[0][c] + m[1][c]*m[1][c] + m[2][c]*m[2][c])
	}
	if !(math.Abs(det) > 1e-12*bound) {
		return [3]float64{}, fmt.Errorf("scan: affine is singular (det %g): world coordinates cannot be mapped to voxels", det)
	}
	b := [3]float64{xyz[0] - a[0][3], xyz[1] - a[1][3], xyz[2] - a[2][3]}
	var ijk [3]float64
	for c := 0; c < 3; c++ {
		mc := m
		for r := 0; r < 3; r++ {
			mc[r][c] = b[r]
		}
		ijk[c] = det3(mc) / det
	}
	return ijk, nil
}

func det3(m [3][3]float64) float64 {
	return m[0][0]*(m[1][1]*m[2][2]-m[1][2]*m[2][1]) -
		m[0][1]*(m[1][0]*m[2][2]-m[1][2]*m[2][0]) +
		m[0][2]*(m[1][0]*m[2][1]-m[1][1]*m[2][0])
}
