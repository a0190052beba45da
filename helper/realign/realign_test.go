package realign

import (
	"bytes"
	"context"
	"errors"
	"math"
	"math/rand/v2"
	"strings"
	"testing"
	"time"
)

// head is an analytic, soft-edged head: an ellipsoid with a smooth (logistic) edge and a few
// Gaussian blobs inside, so moved copies can be written without any interpolation.
func head(x [3]float64) float64 {
	r := math.Sqrt(x[0]*x[0]/(62*62) + x[1]*x[1]/(75*75) + x[2]*x[2]/(55*55))
	v := 1000 / (1 + math.Exp((r-1)*18))
	blobs := [][4]float64{{20, 10, 5, 300}, {-25, -20, 10, -250}, {5, 35, -15, 200}, {-10, 5, 25, 180}, {30, -30, -10, 220}}
	for _, b := range blobs {
		d2 := (x[0]-b[0])*(x[0]-b[0]) + (x[1]-b[1])*(x[1]-b[1]) + (x[2]-b[2])*(x[2]-b[2])
		v += b[3] * math.Exp(-d2/(2*12*12)) / (1 + math.Exp((r-1)*18))
	}
	return v
}

func testGrid(nx, ny, nz int, mm float64) Grid {
	var a Affine
	a[0][0], a[1][1], a[2][2] = mm, mm, mm*1.1
	a[0][3] = -mm * float64(nx-1) / 2
	a[1][3] = -mm * float64(ny-1) / 2
	a[2][3] = -mm * 1.1 * float64(nz-1) / 2
	a[3][3] = 1
	return Grid{Dims: [3]int{nx, ny, nz}, Affine: a}
}

// movedSeries writes volume t as head(M_t⁻¹ y) at every voxel's world position y.
func movedSeries(g Grid, truth []Params) [][]float32 {
	c := g.Center()
	vols := make([][]float32, len(truth))
	for t, p := range truth {
		inv, _ := Inverse(p.Matrix(c))
		v := make([]float32, g.Len())
		f := 0
		for k := 0; k < g.Dims[2]; k++ {
			for j := 0; j < g.Dims[1]; j++ {
				for i := 0; i < g.Dims[0]; i++ {
					y := Apply(g.Affine, [3]float64{float64(i), float64(j), float64(k)})
					v[f] = float32(head(Apply(inv, y)))
					f++
				}
			}
		}
		vols[t] = v
	}
	return vols
}

func randomMotion(n int, seed uint64) []Params {
	rng := rand.New(rand.NewPCG(seed, 7))
	p := make([]Params, n)
	for t := 1; t < n; t++ {
		for k := 0; k < 3; k++ {
			p[t][k] = (2*rng.Float64() - 1) * 3
			p[t][k+3] = (2*rng.Float64() - 1) * 3 * math.Pi / 180
		}
	}
	return p
}

func rmsError(t *testing.T, got, want []Params) (mm, deg float64) {
	t.Helper()
	var st, sr float64
	for v := range want {
		for k := 0; k < 3; k++ {
			st += (got[v][k] - want[v][k]) * (got[v][k] - want[v][k])
			d := (got[v][k+3] - want[v][k+3]) * 180 / math.Pi
			sr += d * d
		}
	}
	n := float64(3 * len(want))
	return math.Sqrt(st / n), math.Sqrt(sr / n)
}

func TestMatrixParamsRoundTrip(t *testing.T) {
	c := [3]float64{3, -7, 12}
	for _, p := range randomMotion(20, 3) {
		q := ParamsOf(p.Matrix(c), c)
		for k := range p {
			if math.Abs(q[k]-p[k]) > 1e-12 {
				t.Fatalf("round trip %v -> %v", p, q)
			}
		}
	}
	// The rotation is right-handed: +90° about z takes x to y.
	r := Rotation(0, 0, math.Pi/2)
	if math.Abs(r[1][0]-1) > 1e-15 || math.Abs(r[0][1]+1) > 1e-15 {
		t.Fatalf("Rz(90°) = %v", r)
	}
}

func TestFramewiseDisplacement(t *testing.T) {
	p := []Params{{}, {0.1, -0.2, 0.3, 0.01, 0, -0.02}, {0.1, -0.2, 0.3, 0.01, 0, -0.02}}
	fd := FramewiseDisplacement(p)
	want := 0.1 + 0.2 + 0.3 + 50*(0.01+0.02)
	if fd[0] != 0 || math.Abs(fd[1]-want) > 1e-12 || fd[2] != 0 {
		t.Fatalf("FD = %v, want [0 %g 0]", fd, want)
	}
}

func TestRecoverKnownMotion(t *testing.T) {
	g := testGrid(48, 56, 30, 3.5)
	n := 9
	if raceEnabled {
		g = testGrid(36, 42, 26, 4.5)
		n = 5
	}
	truth := randomMotion(n, 1)
	vols := movedSeries(g, truth)
	for _, order := range []Interp{Trilinear, BSpline} {
		opt := DefaultOptions()
		opt.Interp = order
		res, err := Estimate(context.Background(), g, vols, opt, nil)
		if err != nil {
			t.Fatal(err)
		}
		mm, deg := rmsError(t, res.Params, truth)
		t.Logf("%v: RMS error %.4f mm, %.4f°", order, mm, deg)
		// The bound (0.1 mm / 0.1° RMS); measured 0.006–0.012 mm / 0.007–0.024° on the
		// 3.5 mm grid, up to 0.08° on the coarse 4.5 mm grid of race runs.
		if mm > 0.1 || deg > 0.1 {
			t.Errorf("%v: RMS error %.4f mm / %.4f° exceeds 0.1", order, mm, deg)
		}
	}
}

func TestResliceUndoesMotion(t *testing.T) {
	g := testGrid(40, 46, 24, 4)
	truth := randomMotion(4, 5)
	vols := movedSeries(g, truth)
	ref := append([]float32(nil), vols[0]...)
	res := &Result{Params: truth, Center: g.Center()}
	opt := DefaultOptions()
	opt.Interp = BSpline
	unc, err := Reslice(context.Background(), g, vols, res, opt, nil)
	if err != nil {
		t.Fatal(err)
	}
	if unc == 0 || unc > g.Len()/4 {
		t.Errorf("uncovered voxels %d of %d", unc, g.Len())
	}
	// Inside the head (reference above 500) the resliced volumes must match the reference: the
	// cubic spline of the soft head is good to about 1 % RMS.
	var ss float64
	var cnt int
	for tt := 1; tt < len(vols); tt++ {
		for f, v := range vols[tt] {
			if ref[f] < 500 || v == 0 {
				continue
			}
			d := float64(v) - float64(ref[f])
			ss += d * d
			cnt++
		}
	}
	rms := math.Sqrt(ss / float64(cnt))
	t.Logf("resliced vs reference: RMS %.2f over %d voxels", rms, cnt)
	if rms > 10 || cnt < len(vols)*1000 {
		t.Errorf("resliced volumes differ from the reference by %.1f RMS (%d voxels)", rms, cnt)
	}
	// Without the motion undone, the volumes differ far more: the check can fail.
	moved := movedSeries(g, truth)
	ss = 0
	for f, v := range moved[1] {
		if ref[f] >= 500 {
			ss += (float64(v) - float64(ref[f])) * (float64(v) - float64(ref[f]))
		}
	}
	if math.Sqrt(ss/float64(cnt/(len(vols)-1))) < 3*rms {
		t.Errorf("the motion barely changes the volumes: the check is too weak")
	}
}

func TestNoOverlap(t *testing.T) {
	g := testGrid(24, 24, 16, 4)
	truth := []Params{{}, {150, 0, 0, 0, 0, 0}}
	vols := movedSeries(g, truth)
	opt := DefaultOptions()
	// Start the search far out so that the moving volume never meets the reference.
	ref := newReference(g, vols[0], opt.withDefaults())
	_, err := ref.registerAll(context.Background(), vols[1:], []Params{{150, 0, 0, 0, 0, 0}}, nil)
	if !errors.Is(err, ErrNoOverlap) {
		t.Fatalf("err = %v, want ErrNoOverlap", err)
	}
}

func TestCancel(t *testing.T) {
	g := testGrid(40, 46, 24, 4)
	vols := movedSeries(g, randomMotion(3, 9))
	for len(vols) < 400 {
		vols = append(vols, vols[len(vols)%3])
	}
	ctx, cancel := context.WithCancel(context.Background())
	time.AfterFunc(50*time.Millisecond, cancel)
	start := time.Now()
	_, err := Estimate(ctx, g, vols, DefaultOptions(), nil)
	if !errors.Is(err, context.Canceled) {
		t.Fatalf("err = %v, want context.Canceled", err)
	}
	if d := time.Since(start); d > 5*time.Second {
		t.Errorf("cancellation took %v", d)
	}
}

func TestWriteTSV(t *testing.T) {
	p := []Params{{}, {0.5, 0, 0, 0, 0, 0.01}}
	res := &Result{Params: p, FD: FramewiseDisplacement(p)}
	var b bytes.Buffer
	if err := res.WriteTSV(&b); err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSpace(b.String()), "\n")
	head := strings.Split(lines[0], "\t")
	if len(head) != 25 || strings.Join(head[:7], " ") != "trans_x trans_y trans_z rot_x rot_y rot_z framewise_displacement" ||
		head[7] != "trans_x_derivative1" || head[24] != "rot_z_derivative1_power2" {
		t.Fatalf("header %q", lines[0])
	}
	row0, row1 := strings.Split(lines[1], "\t"), strings.Split(lines[2], "\t")
	if strings.Join(row0[:10], " ") != "0 0 0 0 0 0 n/a n/a 0 n/a" ||
		strings.Join(row1[:10], " ") != "0.5 0 0 0 0 0.01 1 0.5 0.25 0.25" || row1[22] != "0.01" || row1[23] != "0.0001" || row1[24] != "0.0001" {
		t.Fatalf("rows:\n%s", b.String())
	}
	m, fd := res.Confounds()
	if len(m) != 2 || len(m[1]) != 6 || m[1][0] != 0.5 || fd[1] != 1 {
		t.Fatalf("confounds %v %v", m, fd)
	}
}

// TestScreen: the coarse first look (--realign auto) finds the planted motion closely enough to
// decide, and a still series shows (almost) none.
func TestScreen(t *testing.T) {
	g := testGrid(36, 42, 26, 4.5)
	truth := randomMotion(5, 2)
	res, err := Screen(context.Background(), g, movedSeries(g, truth), DefaultOptions(), nil)
	if err != nil {
		t.Fatal(err)
	}
	mm, deg := rmsError(t, res.Params, truth)
	want := (&Result{Params: truth}).MaxDisplacement()
	t.Logf("screen: RMS error %.3f mm, %.3f°; largest displacement %.2f mm (planted %.2f)", mm, deg, res.MaxDisplacement(), want)
	if mm > 0.3 || deg > 0.3 || math.Abs(res.MaxDisplacement()-want) > 0.1*want {
		t.Errorf("screen: RMS error %.3f mm / %.3f°, largest displacement %.2f mm against %.2f", mm, deg, res.MaxDisplacement(), want)
	}
	still := movedSeries(g, make([]Params, 4))
	res, err = Screen(context.Background(), g, still, DefaultOptions(), nil)
	if err != nil {
		t.Fatal(err)
	}
	if d := res.MaxDisplacement(); d > 0.05 {
		t.Errorf("a still series screened as moving by %.3f mm", d)
	}
}
