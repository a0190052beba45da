package slices

import (
	"fmt"
	"math"

	"github.com/hubscope/hubscope/ipc"
)

// Plane is one of the three orthogonal viewing planes.
type Plane int

const (
	Axial    Plane = iota // perpendicular to the inferior–superior (z) axis
	Coronal               // perpendicular to the posterior–anterior (y) axis
	Sagittal              // perpendicular to the left–right (x) axis
)

func (p Plane) String() string {
	switch p {
	case Axial:
		return "Axial"
	case Coronal:
		return "Coronal"
	case Sagittal:
		return "Sagittal"
	}
	return fmt.Sprintf("Plane(%d)", int(p))
}

// Orientation says which grid axis runs along each world (RAS+) axis of a volume's affine, and
// in which direction. The viewer does not reslice: an oblique grid is shown along its nearest
// world axes, as MRIcron and FSLeyes do in voxel mode, so every displayed pixel is one voxel.
type Orientation struct {
	// Axis[w] is the grid axis (0 = i, 1 = j, 2 = k) closest to world axis w (0 = x, left→right;
	// 1 = y, posterior→anterior; 2 = z, inferior→superior).
	Axis [3]int
	// Sign[w] is +1 when increasing the grid index moves towards +w (right, anterior,
	// superior), −1 otherwise.
	Sign [3]int
	// Spacing[a] is the voxel size along grid axis a in mm (the norm of the affine's column a).
	Spacing [3]float64
}

// OrientationOf finds the assignment of grid axes to world axes that best matches the affine:
// of the six permutations, the one with the largest sum of |cos| between each grid axis and its
// world axis.
func OrientationOf(aff [4][4]float64) Orientation {
	var o Orientation
	for a := range 3 {
		o.Spacing[a] = math.Sqrt(aff[0][a]*aff[0][a] + aff[1][a]*aff[1][a] + aff[2][a]*aff[2][a])
	}
	cos := func(w, a int) float64 {
		if o.Spacing[a] == 0 {
			return 0
		}
		return aff[w][a] / o.Spacing[a]
	}
	best := -1.0
	for _, p := range [6][3]int{{0, 1, 2}, {0, 2, 1}, {1, 0, 2}, {1, 2, 0}, {2, 0, 1}, {2, 1, 0}} {
		s := math.Abs(cos(0, p[0])) + math.Abs(cos(1, p[1])) + math.Abs(cos(2, p[2]))
		if s > best {
			best, o.Axis = s, p
		}
	}
	for w := range 3 {
		o.Sign[w] = 1
		if cos(w, o.Axis[w]) < 0 {
			o.Sign[w] = -1
		}
		if o.Spacing[o.Axis[w]] == 0 { // degenerate affine: show voxels as squares
			o.Spacing[o.Axis[w]] = 1
		}
	}
	return o
}

// World maps a voxel to world millimetres through the affine: x = A·(i, j, k, 1).
func World(aff [4][4]float64, v [3]int) [3]float64 {
	var x [3]float64
	for r := range 3 {
		x[r] = aff[r][0]*float64(v[0]) + aff[r][1]*float64(v[1]) + aff[r][2]*float64(v[2]) + aff[r][3]
	}
	return x
}

// sliceGeom is how one plane of a grid is laid out on screen: which grid axis is held fixed,
// which runs along screen x (rightwards) and screen y (downwards), whether each runs against
// the screen direction, and the pixel's physical size.
type sliceGeom struct {
	plane            Plane
	fixed, col, row  int
	colFlip, rowFlip bool
	nc, nr, nf       int
	dc, dr           float64 // mm per pixel along screen x and y
	stride           [3]int  // offset in the volume's data per step along i, j, k
	// labels at the left, right, top and bottom edges ("R", "L", "A", "P", "S", "I").
	left, right, top, bottom string
}

// newSliceGeom lays out plane p of a grid with dims and orientation o. Axial and coronal views
// look from below and from the front, so the patient's right is on screen left (radiological)
// unless neurological is set; sagittal views look from the patient's left, anterior to the left
// (as FSLeyes draws them).
func newSliceGeom(p Plane, dims [3]int, o Orientation, radiological bool) sliceGeom {
	// World axes: the plane's normal, its horizontal and vertical; hSign is the world direction
	// that screen-right points to; screen-up always points to +vertical.
	var normal, h, v, hSign int
	switch p {
	case Axial:
		normal, h, v = 2, 0, 1
	case Coronal:
		normal, h, v = 1, 0, 2
	default:
		normal, h, v = 0, 1, 2
	}
	g := sliceGeom{plane: p, fixed: o.Axis[normal], col: o.Axis[h], row: o.Axis[v]}
	switch {
	case p == Sagittal:
		hSign = -1 // screen-right = posterior
		g.left, g.right = "A", "P"
	case radiological:
		hSign = -1 // screen-right = patient's left
		g.left, g.right = "R", "L"
	default:
		hSign = 1
		g.left, g.right = "L", "R"
	}
	if p == Axial {
		g.top, g.bottom = "A", "P"
	} else {
		g.top, g.bottom = "S", "I"
	}
	g.colFlip = o.Sign[h]*hSign < 0
	g.rowFlip = o.Sign[v] > 0 // screen-down runs towards −vertical
	g.nc, g.nr, g.nf = dims[g.col], dims[g.row], dims[g.fixed]
	g.dc, g.dr = o.Spacing[g.col], o.Spacing[g.row]
	g.stride = [3]int{1, dims[0], dims[0] * dims[1]}
	return g
}

// voxel returns the grid position shown at pixel (px, py) of slice index s along the fixed axis.
func (g sliceGeom) voxel(px, py, s int) [3]int {
	var v [3]int
	v[g.fixed] = s
	v[g.col] = px
	if g.colFlip {
		v[g.col] = g.nc - 1 - px
	}
	v[g.row] = py
	if g.rowFlip {
		v[g.row] = g.nr - 1 - py
	}
	return v
}

// pixel returns where voxel v appears in its slice (inverse of voxel).
func (g sliceGeom) pixel(v [3]int) (px, py int) {
	px, py = v[g.col], v[g.row]
	if g.colFlip {
		px = g.nc - 1 - px
	}
	if g.rowFlip {
		py = g.nr - 1 - py
	}
	return px, py
}

// sameGrid reports whether two volumes share a grid (dims and affine to 1e-3 mm), the
// condition for drawing one over the other voxel for voxel.
func sameGrid(a, b *ipc.VolumeHeader) bool {
	if a.Dims != b.Dims {
		return false
	}
	for r := range 3 {
		for c := range 4 {
			if math.Abs(a.Affine[r][c]-b.Affine[r][c]) > 1e-3 {
				return false
			}
		}
	}
	return true
}
