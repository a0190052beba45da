package render

import (
	"fmt"
	"math"
	"math/rand/v2"
	"testing"

	"github.com/go-gl/mathgl/mgl32"
)

// checkClosedOriented fails unless every directed edge of m occurs exactly once and its reverse
// exactly once: the surface is closed (no boundary), manifold along edges and consistently
// oriented.
func checkClosedOriented(t *testing.T, m *Mesh, what string) {
	t.Helper()
	type edge struct{ a, b uint32 }
	seen := make(map[edge]int)
	for _, tr := range m.Triangles {
		for e := 0; e < 3; e++ {
			seen[edge{tr[e], tr[(e+1)%3]}]++
		}
	}
	for e, n := range seen {
		if n != 1 {
			t.Fatalf("%s: directed edge %d→%d used by %d triangles", what, e.a, e.b, n)
		}
		if seen[edge{e.b, e.a}] != 1 {
			t.Fatalf("%s: edge %d→%d has no opposite: the surface is open or inconsistently wound", what, e.a, e.b)
		}
	}
}

// enclosedVolume is the signed volume of a closed mesh by the divergence theorem:
// V = Σ v0·(v1×v2)/6, positive when the triangles face outwards.
func enclosedVolume(m *Mesh) float64 {
	var v float64
	for _, t := range m.Triangles {
		a, b, c := m.Vertices[t[0]], m.Vertices[t[1]], m.Vertices[t[2]]
		v += float64(a.Dot(b.Cross(c))) / 6
	}
	return v
}

func TestMarchingCubesEveryCubeCase(t *testing.T) {
	// Each of the 256 corner patterns as one cube of a 4×4×4 grid padded by background.
	id := [4][4]float64{{1, 0, 0, 0}, {0, 1, 0, 0}, {0, 0, 1, 0}, {0, 0, 0, 1}}
	for c := 1; c < 256; c++ {
		vol := make([]float32, 64)
		for n, o := range mcCornerOffset {
			if c>>n&1 == 1 {
				vol[(1+o[0])+4*((1+o[1])+4*(1+o[2]))] = 1
			}
		}
		m, err := MarchingCubes(vol, [3]int{4, 4, 4}, id, 0.5)
		if err != nil {
			t.Fatal(err)
		}
		checkClosedOriented(t, m, fmt.Sprintf("case %08b", c))
		if v := enclosedVolume(m); !(v > 0) {
			t.Fatalf("case %08b: enclosed volume %g, want > 0 (triangles face inwards)", c, v)
		}
	}
}

func TestMarchingCubesRandomVolumesAreClosed(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	id := [4][4]float64{{1, 0, 0, 0}, {0, 1, 0, 0}, {0, 0, 1, 0}, {0, 0, 0, 1}}
	for trial := 0; trial < 20; trial++ {
		dims := [3]int{5 + rng.IntN(6), 5 + rng.IntN(6), 5 + rng.IntN(6)}
		vol := make([]float32, dims[0]*dims[1]*dims[2])
		for i := range vol {
			vol[i] = rng.Float32()
		}
		m, err := MarchingCubes(vol, dims, id, 0.5)
		if err != nil {
			t.Fatal(err)
		}
		checkClosedOriented(t, m, "random volume")
		if v := enclosedVolume(m); !(v > 0) {
			t.Fatalf("random volume: enclosed volume %g", v)
		}
	}
}

func TestMarchingCubesSphere(t *testing.T) {
	// A ball of radius 20 mm sampled on a 2 mm grid with an affine that flips x (LAS storage,
	// negative determinant) and shifts the origin, as an MNI sform does.
	const r, h = 20.0, 2.0
	dims := [3]int{30, 30, 30}
	affine := [4][4]float64{{-h, 0, 0, 30}, {0, h, 0, -40}, {0, 0, h, -20}, {0, 0, 0, 1}}
	centre := mgl32.Vec3{0, -10, 10}
	vol := make([]float32, dims[0]*dims[1]*dims[2])
	for k := 0; k < dims[2]; k++ {
		for j := 0; j < dims[1]; j++ {
			for i := 0; i < dims[0]; i++ {
				x := mgl32.Vec3{float32(-h*float64(i) + 30), float32(h*float64(j) - 40), float32(h*float64(k) - 20)}
				// signed distance inside positive, so the iso-surface 0 is the sphere itself
				vol[i+dims[0]*(j+dims[1]*k)] = float32(r) - x.Sub(centre).Len()
			}
		}
	}
	m, err := MarchingCubes(vol, dims, affine, 0)
	if err != nil {
		t.Fatal(err)
	}
	checkClosedOriented(t, m, "sphere")
	want := 4.0 / 3 * math.Pi * r * r * r
	if v := enclosedVolume(m); math.Abs(v-want)/want > 0.02 {
		t.Fatalf("sphere volume %.0f mm³, want %.0f ± 2 %%", v, want)
	}
	for i, p := range m.Vertices {
		d := p.Sub(centre)
		if l := d.Len(); math.Abs(float64(l)-r) > 0.2 {
			t.Fatalf("vertex %d at %.3f mm from the centre, want %.0f", i, l, r)
		}
		if c := m.Normals[i].Dot(d.Normalize()); c < 0.98 {
			t.Fatalf("vertex %d: normal·radial = %.3f, want ≈ 1 (outward)", i, c)
		}
	}
	lo, hi, ok := m.Bounds()
	if !ok || lo.Sub(centre.Sub(mgl32.Vec3{r, r, r})).Len() > 0.5 || hi.Sub(centre.Add(mgl32.Vec3{r, r, r})).Len() > 0.5 {
		t.Fatalf("bounds %v–%v, want the sphere's box around %v", lo, hi, centre)
	}
}

func TestMarchingCubesRejectsBadInput(t *testing.T) {
	id := [4][4]float64{{1, 0, 0, 0}, {0, 1, 0, 0}, {0, 0, 1, 0}, {0, 0, 0, 1}}
	if _, err := MarchingCubes(make([]float32, 7), [3]int{2, 2, 2}, id, 0.5); err == nil {
		t.Error("7 values for 8 voxels accepted")
	}
	if _, err := MarchingCubes(nil, [3]int{0, 2, 2}, id, 0.5); err == nil {
		t.Error("empty grid accepted")
	}
	if _, err := MarchingCubes(make([]float32, 8), [3]int{2, 2, 2}, id, float32(math.NaN())); err == nil {
		t.Error("NaN iso accepted")
	}
}

func TestDownsample(t *testing.T) {
	// 5×4×2 grid, values i + 10j + 100k, affine with 2 mm voxels and an origin shift
	dims := [3]int{5, 4, 2}
	vol := make([]float32, 40)
	for k := 0; k < 2; k++ {
		for j := 0; j < 4; j++ {
			for i := 0; i < 5; i++ {
				vol[i+5*(j+4*k)] = float32(i + 10*j + 100*k)
			}
		}
	}
	affine := [4][4]float64{{2, 0, 0, -10}, {0, 2, 0, 4}, {0, 0, 2, 6}, {0, 0, 0, 1}}
	out, od, oa, err := Downsample(vol, dims, affine, 2)
	if err != nil {
		t.Fatal(err)
	}
	if od != [3]int{3, 2, 1} {
		t.Fatalf("dims %v, want [3 2 1]", od)
	}
	// block (0,0,0): i∈{0,1}, j∈{0,1}, k∈{0,1} → mean 0.5 + 5 + 50
	// block (2,1,0): i=4 only, j∈{2,3}, k∈{0,1} → 4 + 25 + 50
	if out[0] != 55.5 || out[2+3*1] != 79 {
		t.Fatalf("block means %g and %g, want 55.5 and 79", out[0], out[5])
	}
	// new voxel 0 is centred at old index 0.5 on each axis: world (−9, 5, 7); voxels 4 mm
	if oa[0][3] != -9 || oa[1][3] != 5 || oa[2][3] != 7 || oa[0][0] != 4 || oa[2][2] != 4 {
		t.Fatalf("affine %v", oa)
	}
	if _, _, _, err := Downsample(vol, dims, affine, 0); err == nil {
		t.Fatal("step 0 accepted")
	}
}

func TestSmoothKeepsSphereClosedAndRound(t *testing.T) {
	// a binary ball gives a terraced surface; Taubin smoothing must make it rounder without
	// shrinking it noticeably and keep it closed
	const n, r = 24, 9.0
	vol := make([]float32, n*n*n)
	for k := 0; k < n; k++ {
		for j := 0; j < n; j++ {
			for i := 0; i < n; i++ {
				x, y, z := float64(i)-11.5, float64(j)-11.5, float64(k)-11.5
				if x*x+y*y+z*z <= r*r {
					vol[i+n*(j+n*k)] = 1
				}
			}
		}
	}
	id := [4][4]float64{{1, 0, 0, -11.5}, {0, 1, 0, -11.5}, {0, 0, 1, -11.5}, {0, 0, 0, 1}}
	m, err := MarchingCubes(vol, [3]int{n, n, n}, id, 0.5)
	if err != nil {
		t.Fatal(err)
	}
	spread := func() (mean, sd float64) {
		var s, s2 float64
		for _, v := range m.Vertices {
			l := float64(v.Len())
			s += l
			s2 += l * l
		}
		mean = s / float64(len(m.Vertices))
		return mean, math.Sqrt(s2/float64(len(m.Vertices)) - mean*mean)
	}
	m0, sd0 := spread()
	v0 := enclosedVolume(m)
	m.Smooth(10)
	m1, sd1 := spread()
	checkClosedOriented(t, m, "smoothed ball")
	if !(sd1 < 0.6*sd0) {
		t.Fatalf("radius spread %.3f → %.3f after smoothing, want at least 40 %% less", sd0, sd1)
	}
	if v1 := enclosedVolume(m); math.Abs(v1-v0)/v0 > 0.03 || math.Abs(m1-m0) > 0.2 {
		t.Fatalf("smoothing changed the volume %.0f → %.0f, mean radius %.2f → %.2f", v0, v1, m0, m1)
	}
}

func TestBlurVolume(t *testing.T) {
	// a unit impulse in a 7³ grid: one pass gives the separable kernel [1 2 1]/4 on each axis
	dims := [3]int{7, 7, 7}
	at := func(i, j, k int) int { return i + 7*(j+7*k) }
	vol := make([]float32, 343)
	vol[at(3, 3, 3)] = 1
	out, err := BlurVolume(vol, dims, 1)
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		i, j, k int
		want    float32
	}{{3, 3, 3, 0.125}, {4, 3, 3, 0.0625}, {3, 2, 3, 0.0625}, {3, 3, 4, 0.0625}, {4, 4, 3, 0.03125}, {4, 4, 4, 0.015625}, {5, 3, 3, 0}} {
		if got := out[at(c.i, c.j, c.k)]; math.Abs(float64(got-c.want)) > 1e-7 {
			t.Errorf("voxel (%d,%d,%d) = %g, want %g", c.i, c.j, c.k, got, c.want)
		}
	}
	// two passes: total preserved away from the border; a constant stays constant at the border
	out, _ = BlurVolume(vol, dims, 2)
	var sum float64
	for _, v := range out {
		sum += float64(v)
	}
	if math.Abs(sum-1) > 1e-6 {
		t.Errorf("two passes sum to %g, want 1", sum)
	}
	for i := range vol {
		vol[i] = 3
	}
	out, _ = BlurVolume(vol, dims, 3)
	for i, v := range out {
		if v != 3 {
			t.Fatalf("constant volume blurred to %g at %d", v, i)
		}
	}
	if _, err := BlurVolume(vol[:10], dims, 1); err == nil {
		t.Fatal("short volume accepted")
	}
	if vol[0] != 3 {
		t.Fatal("BlurVolume changed its input")
	}
}

// TestMaskSurfaceResolutionIndependent: a ball mask at 1 mm and at 2 mm gives nearly the same
// closed surface (the 1 mm grid is averaged down to 2 mm first), enclosing the ball's volume.
func TestMaskSurfaceResolutionIndependent(t *testing.T) {
	const r = 30.0 // mm
	ball := func(h float64) (*Mesh, float64) {
		n := int(math.Ceil(2*(r+8)/h)) + 1
		in := make([]bool, n*n*n)
		o := -float64(n-1) / 2 * h
		for k := 0; k < n; k++ {
			for j := 0; j < n; j++ {
				for i := 0; i < n; i++ {
					x, y, z := o+h*float64(i), o+h*float64(j), o+h*float64(k)
					in[i+n*(j+n*k)] = x*x+y*y+z*z <= r*r
				}
			}
		}
		affine := [4][4]float64{{h, 0, 0, o}, {0, h, 0, o}, {0, 0, h, o}, {0, 0, 0, 1}}
		m, err := MaskSurface(in, [3]int{n, n, n}, affine)
		if err != nil {
			t.Fatal(err)
		}
		checkClosedOriented(t, m, "ball surface")
		return m, enclosedVolume(m)
	}
	want := 4.0 / 3 * math.Pi * r * r * r
	m1, v1 := ball(1)
	m2, v2 := ball(2)
	for _, c := range []struct {
		h float64
		v float64
	}{{1, v1}, {2, v2}} {
		if math.Abs(c.v-want)/want > 0.05 {
			t.Errorf("%g mm mask: surface encloses %.0f mm³, ball %.0f", c.h, c.v, want)
		}
	}
	if n1, n2 := len(m1.Triangles), len(m2.Triangles); math.Abs(float64(n1-n2)) > 0.1*float64(n2) {
		t.Errorf("1 mm mask gives %d triangles, 2 mm gives %d: want about the same", n1, n2)
	}
	if _, err := MaskSurface(make([]bool, 7), [3]int{2, 2, 2}, [4][4]float64{}); err == nil {
		t.Error("7 voxels for a 2×2×2 grid accepted")
	}
}

// blurReference is BlurVolume as first written, voxel by voxel with its coordinate divided
// out: the run-wise form must give the same floats, bit for bit.
func blurReference(vol []float32, dims [3]int, passes int) []float32 {
	nx, ny := dims[0], dims[1]
	out := append([]float32(nil), vol...)
	tmp := make([]float32, len(out))
	strides := [3]int{1, nx, nx * ny}
	for p := 0; p < passes; p++ {
		for axis := 0; axis < 3; axis++ {
			n, st := dims[axis], strides[axis]
			for i := range out {
				c := i / st % n
				lo, hi := i, i
				if c > 0 {
					lo = i - st
				}
				if c < n-1 {
					hi = i + st
				}
				tmp[i] = 0.25*out[lo] + 0.5*out[i] + 0.25*out[hi]
			}
			out, tmp = tmp, out
		}
	}
	return out
}

func TestBlurVolumeBitForBit(t *testing.T) {
	for _, dims := range [][3]int{{1, 1, 1}, {7, 1, 1}, {1, 5, 3}, {9, 11, 13}, {2, 2, 2}} {
		vol := make([]float32, dims[0]*dims[1]*dims[2])
		for i := range vol {
			vol[i] = float32((i*7919)%13) / 3
		}
		for _, passes := range []int{0, 1, 3} {
			got, err := BlurVolume(vol, dims, passes)
			if err != nil {
				t.Fatal(err)
			}
			want := blurReference(vol, dims, passes)
			for i := range want {
				if math.Float32bits(got[i]) != math.Float32bits(want[i]) {
					t.Fatalf("%v, %d passes: voxel %d = %g, voxel by voxel %g", dims, passes, i, got[i], want[i])
				}
			}
		}
	}
}

// smoothReference is Smooth's step as first written with mgl32's Vec3 methods: the written-out
// form must move every vertex to the same floats, bit for bit.
func smoothReference(m *Mesh, iterations int) {
	start, nbr := m.neighbours()
	delta := make([]mgl32.Vec3, len(m.Vertices))
	step := func(f float32) {
		for v := range m.Vertices {
			ns := nbr[start[v]:start[v+1]]
			if len(ns) == 0 {
				delta[v] = mgl32.Vec3{}
				continue
			}
			var s mgl32.Vec3
			for _, u := range ns {
				s = s.Add(m.Vertices[u])
			}
			delta[v] = s.Mul(1 / float32(len(ns))).Sub(m.Vertices[v]).Mul(f)
		}
		for v := range m.Vertices {
			m.Vertices[v] = m.Vertices[v].Add(delta[v])
		}
	}
	for it := 0; it < iterations; it++ {
		step(0.5)
		step(-0.53)
	}
}

func TestSmoothBitForBit(t *testing.T) {
	vol := make([]float32, 12*13*11)
	for k := 0; k < 11; k++ {
		for j := 0; j < 13; j++ {
			for i := 0; i < 12; i++ {
				d := math.Hypot(math.Hypot(float64(i)-5.5, float64(j)-6), float64(k)-5)
				vol[i+12*(j+13*k)] = float32(4.5 - d + 0.3*math.Sin(float64(i*j+k)))
			}
		}
	}
	aff := [4][4]float64{{2, 0, 0, -11}, {0, 2.5, 0, 3}, {0, 0, 1.5, 7}, {0, 0, 0, 1}}
	a, err := MarchingCubes(vol, [3]int{12, 13, 11}, aff, 0)
	if err != nil || len(a.Vertices) < 100 {
		t.Fatalf("test surface: %v, %d vertices", err, len(a.Vertices))
	}
	b := &Mesh{Vertices: append([]mgl32.Vec3(nil), a.Vertices...), Triangles: a.Triangles}
	a.Smooth(5)
	smoothReference(b, 5)
	for v := range a.Vertices {
		for c := 0; c < 3; c++ {
			if math.Float32bits(a.Vertices[v][c]) != math.Float32bits(b.Vertices[v][c]) {
				t.Fatalf("vertex %d: %v, with Vec3's methods %v", v, a.Vertices[v], b.Vertices[v])
			}
		}
	}
}
