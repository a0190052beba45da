package scan

// Scan is a masked resting-state scan: N nodes (voxels or regions) × L time points.
type Scan struct {
	Data   []float32     // N×L row-major: series of node v is Data[v*L:(v+1)*L]
	N, L   int           // nodes, time points
	IJK    [][3]int32    // voxel position of node v (nil for a plain matrix input)
	Dims   [3]int        // grid size (zero for a plain matrix)
	Affine [4][4]float64 // voxel ijk → world mm
	TR     float64       // repetition time in seconds (0 when unknown)
	Source string        // input path
	Mask   Mask          // final mask after dropping bad voxels (grid-sized; empty for a plain matrix)
	Dropped DropStats
	Labels []string // node names for plain matrices (nil for images)
	// BytesRead is the amount of image data decoded while loading (for throughput reports).
	BytesRead int64
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
