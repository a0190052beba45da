package slices

import (
	"context"
	"errors"
	"image"
	"image/color"
	"math"
	"sync"
	"testing"
	"time"

	"github.com/hubscope/hubscope/app/slices/slicestest"
	"github.com/hubscope/hubscope/ipc"
)

func TestOrientationMNI(t *testing.T) {
	o := OrientationOf(slicestest.Affine)
	if o.Axis != [3]int{0, 1, 2} || o.Sign != [3]int{-1, 1, 1} || o.Spacing != [3]float64{2, 2, 2} {
		t.Fatalf("%+v", o)
	}
}

// A sagittally acquired grid stored as (j, k, i) → (y, z, x) with 3 mm slices along x: the views
// must still put the patient's left where the convention says, whatever the storage order.
func TestGeometryPermutedGrid(t *testing.T) {
	aff := [4][4]float64{
		{0, 0, 3, -60},   // x = 3·k
		{-1, 0, 0, 100},  // y = −i (i runs anterior → posterior)
		{0, 1.5, 0, -40}, // z = 1.5·j
		{0, 0, 0, 1},
	}
	dims := [3]int{200, 120, 40}
	o := OrientationOf(aff)
	if o.Axis != [3]int{2, 0, 1} || o.Sign != [3]int{1, -1, 1} || o.Spacing != [3]float64{1, 1.5, 3} {
		t.Fatalf("%+v", o)
	}
	for _, rad := range []bool{true, false} {
		for p := range 3 {
			g := newSliceGeom(Plane(p), dims, o, rad)
			// Every pixel maps to a voxel and back.
			for _, px := range [][2]int{{0, 0}, {g.nc - 1, 0}, {3, g.nr - 1}, {g.nc / 2, g.nr / 3}} {
				v := g.voxel(px[0], px[1], 7)
				if x, y := g.pixel(v); x != px[0] || y != px[1] || v[g.fixed] != 7 {
					t.Fatalf("%s: pixel %v → voxel %v → (%d, %d)", Plane(p), px, v, x, y)
				}
			}
			// Moving one pixel right moves the world position towards the screen-right letter.
			a, b := World(aff, g.voxel(5, 5, 7)), World(aff, g.voxel(6, 5, 7))
			dx := [3]float64{b[0] - a[0], b[1] - a[1], b[2] - a[2]}
			wantRight := map[string][2]int{"L": {0, -1}, "R": {0, 1}, "P": {1, -1}}[g.right]
			if math.Signbit(dx[wantRight[0]]) != (wantRight[1] < 0) || dx[wantRight[0]] == 0 {
				t.Fatalf("%s (radiological %v): a step right moves %v mm, towards %q?", Plane(p), rad, dx, g.right)
			}
			// Moving one pixel down moves towards the bottom letter (−y or −z).
			c := World(aff, g.voxel(5, 6, 7))
			down := map[string]int{"P": 1, "I": 2}[g.bottom]
			if c[down]-a[down] >= 0 {
				t.Fatalf("%s: a step down moves %v → %v", Plane(p), a, c)
			}
		}
	}
}

func TestColormaps(t *testing.T) {
	hot := newLUT(Hot)
	if hot.at(0) != (color.NRGBA{0, 0, 0, 255}) || hot.at(1) != (color.NRGBA{255, 255, 255, 255}) {
		t.Fatalf("hot ends %v, %v", hot.at(0), hot.at(1))
	}
	if c := hot.at(1.0 / 3); c.R != 255 || c.G != 0 {
		t.Fatalf("hot at 1/3: %v, want pure red", c)
	}
	vir := newLUT(Viridis)
	if c := vir.at(0); c.R != 0x44 || c.G != 0x01 || c.B != 0x54 {
		t.Fatalf("viridis at 0: %v", c)
	}
	if c := vir.at(1); c.R != 0xfd || c.G != 0xe7 || c.B != 0x25 {
		t.Fatalf("viridis at 1: %v", c)
	}
	// matplotlib's viridis(0.5), entry 128 of its table: #21918c
	if c := vir.at(0.5); c != (color.NRGBA{0x21, 0x91, 0x8c, 255}) {
		t.Fatalf("viridis at 0.5: %v, want #21918c", c)
	}
	if c := vir.at(math.NaN()); c != vir[0] {
		t.Fatalf("NaN coloured %v", c)
	}
	if ModuleColor(0).A != 0 || ModuleColor(-3).A != 0 {
		t.Fatal("label 0 is not transparent")
	}
	seen := map[[3]uint8]bool{}
	for m := 1; m <= 20; m++ {
		c := ModuleColor(m)
		seen[[3]uint8{c.R, c.G, c.B}] = true
	}
	if len(seen) != 20 {
		t.Fatalf("modules 1–20 share colours: %d distinct", len(seen))
	}
}

// countingService counts Volume calls and lets the test hold them.
type countingService struct {
	ipc.Service
	mu      sync.Mutex
	calls   int
	release chan struct{}
	ended   chan error
}

func (s *countingService) Volume(ctx context.Context, job, name string) (*ipc.Volume, error) {
	s.mu.Lock()
	s.calls++
	s.mu.Unlock()
	if s.release != nil {
		select {
		case <-s.release:
		case <-ctx.Done():
			s.ended <- ctx.Err()
			return nil, ctx.Err()
		}
	}
	if name == "missing" {
		return nil, ipc.Errorf(ipc.CodeNotFound, "no volume %q", name)
	}
	return slicestest.VolumeOf(name)
}

func TestCacheSharesOneFetch(t *testing.T) {
	svc := &countingService{release: make(chan struct{}), ended: make(chan error, 1)}
	c := NewVolumeCache(svc, 0)
	var wg sync.WaitGroup
	vols := make([]*ipc.Volume, 4)
	for n := range vols {
		wg.Add(1)
		go func() {
			defer wg.Done()
			v, err := c.Volume(context.Background(), slicestest.JobID, "degree")
			if err != nil {
				t.Error(err)
			}
			vols[n] = v
		}()
	}
	close(svc.release)
	wg.Wait()
	if v, _ := c.Volume(context.Background(), slicestest.JobID, "degree"); v != vols[0] {
		t.Fatal("the cached volume is not the fetched one")
	}
	for _, v := range vols[1:] {
		if v != vols[0] {
			t.Fatal("concurrent callers got different volumes")
		}
	}
	// Concurrent callers may have arrived after the first fetch finished (then they hit the
	// cache) or during it (then they shared it): never a second fetch.
	if svc.calls != 1 {
		t.Fatalf("%d fetches", svc.calls)
	}
}

func TestCacheCancelsAbandonedFetch(t *testing.T) {
	svc := &countingService{release: make(chan struct{}), ended: make(chan error, 1)}
	c := NewVolumeCache(svc, 0)
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error)
	go func() {
		_, err := c.Volume(ctx, slicestest.JobID, "degree")
		done <- err
	}()
	for {
		svc.mu.Lock()
		n := svc.calls
		svc.mu.Unlock()
		if n == 1 {
			break
		}
		time.Sleep(time.Millisecond)
	}
	cancel()
	if err := <-done; !errors.Is(err, context.Canceled) {
		t.Fatalf("caller got %v", err)
	}
	if err := <-svc.ended; !errors.Is(err, context.Canceled) {
		t.Fatalf("the helper's request ended with %v", err)
	}
	// A later request starts afresh and succeeds.
	close(svc.release)
	if _, err := c.Volume(context.Background(), slicestest.JobID, "degree"); err != nil || svc.calls != 2 {
		t.Fatalf("after the abandoned fetch: %v, %d calls", err, svc.calls)
	}
}

func TestCacheEvictsAndForgets(t *testing.T) {
	svc := &countingService{}
	one := volumeBytes(mustVolume(t, "degree"))
	c := NewVolumeCache(svc, 2*one) // room for two volumes
	ctx := context.Background()
	for _, n := range []string{"degree", "strength", "degree", "hub_z"} {
		if _, err := c.Volume(ctx, slicestest.JobID, n); err != nil {
			t.Fatal(err)
		}
	}
	// degree was used after strength, so strength went first.
	if c.Bytes() != 2*one || svc.calls != 3 {
		t.Fatalf("%d bytes, %d calls", c.Bytes(), svc.calls)
	}
	c.Volume(ctx, slicestest.JobID, "degree")
	if svc.calls != 3 {
		t.Fatal("degree was evicted instead of strength")
	}
	c.Volume(ctx, slicestest.JobID, "strength")
	if svc.calls != 4 {
		t.Fatal("strength was kept beyond the budget")
	}
	if _, err := c.Volume(ctx, slicestest.JobID, "missing"); !ipc.IsCode(err, ipc.CodeNotFound) {
		t.Fatalf("missing volume: %v", err)
	}
	c.Volume(ctx, slicestest.JobID, "missing")
	if svc.calls != 6 {
		t.Fatal("an error was cached")
	}
	c.Forget(slicestest.JobID)
	if c.Bytes() != 0 {
		t.Fatalf("%d bytes after Forget", c.Bytes())
	}
}

func mustVolume(t *testing.T, name string) *ipc.Volume {
	v, err := slicestest.VolumeOf(name)
	if err != nil {
		t.Fatal(err)
	}
	return v
}

// BenchmarkRenderSlice draws one axial slice of the MNI152 2 mm grid (91 × 109 voxels) with a
// background and a degree overlay: what a slider step costs before Fyne scales the image.
func BenchmarkRenderSlice(b *testing.B) {
	dims := [3]int{91, 109, 91}
	aff := [4][4]float64{{-2, 0, 0, 90}, {0, 2, 0, -126}, {0, 0, 2, -72}, {0, 0, 0, 1}}
	n := dims[0] * dims[1] * dims[2]
	bg := &ipc.Volume{Header: ipc.VolumeHeader{Dims: dims, Affine: aff}, Data: make([]float32, n)}
	ov := &ipc.Volume{Header: ipc.VolumeHeader{Dims: dims, Affine: aff, Max: 1}, Data: make([]float32, n)}
	for i := range bg.Data {
		bg.Data[i] = float32(i % 1000)
		ov.Data[i] = float32(i%997) / 997
	}
	lo, hi := intensityWindow(bg)
	bl := &layer{vol: bg, lo: lo, hi: hi}
	ol := &layer{vol: ov, style: Style{Colormap: Hot, Threshold: 0.2, Max: 1, Opacity: 0.8}, lut: newLUT(Hot)}
	for _, p := range []Plane{Axial, Coronal, Sagittal} {
		g := newSliceGeom(p, dims, OrientationOf(aff), true)
		b.Run(p.String(), func(b *testing.B) {
			for b.Loop() {
				img := image.NewRGBA(image.Rect(0, 0, g.nc, g.nr))
				renderSlice(img, g, g.nf/2, bl, ol)
			}
		})
	}
}

// A signed map (seed r, z, t) is drawn on the diverging scale: a negative value as visible as a
// positive one (cold hues against hot ones), and |value| below the threshold transparent on
// both sides.
func TestSignedOverlayShowsNegativeValues(t *testing.T) {
	dims := [3]int{5, 1, 1}
	aff := [4][4]float64{{-2, 0, 0, 0}, {0, 2, 0, 0}, {0, 0, 2, 0}, {0, 0, 0, 1}}
	bg := &ipc.Volume{Header: ipc.VolumeHeader{Dims: dims, Affine: aff}, Data: []float32{0, 0, 0, 0, 1}}
	ov := &ipc.Volume{Header: ipc.VolumeHeader{Dims: dims, Affine: aff, Min: -1, Max: 1}, Data: []float32{-0.65, -0.1, 0.1, 0.65, float32(math.NaN())}}
	if !isSigned(ov) {
		t.Fatal("a map with negative values is not taken as signed")
	}
	ol := &layer{vol: ov, style: Style{Colormap: ColdHot, Threshold: 0.3, Max: 1, Opacity: 1, Signed: true}, lut: newLUT(ColdHot)}
	g := newSliceGeom(Axial, dims, OrientationOf(aff), false)
	img := image.NewRGBA(image.Rect(0, 0, g.nc, g.nr))
	renderSlice(img, g, 0, &layer{vol: bg, lo: 0, hi: 1}, ol)
	at := func(i int) color.RGBA {
		px, py := g.pixel([3]int{i, 0, 0})
		return img.RGBAAt(px, py)
	}
	// −0.65 and +0.65 lie half-way from the threshold 0.3 to 1: hot(0.5) = (255, 128, 0) and,
	// for the cold half, the same with red and blue swapped.
	if c := at(0); c.R != 0 || c.B != 255 || c.G < 120 || c.G > 135 {
		t.Errorf("−0.65 drawn %v, want blue (0, ~128, 255)", c)
	}
	if c := at(3); c.R != 255 || c.B != 0 || c.G < 120 || c.G > 135 {
		t.Errorf("+0.65 drawn %v, want orange (255, ~128, 0)", c)
	}
	for _, i := range []int{1, 2} {
		if c := at(i); c.R != 0 || c.G != 0 || c.B != 0 {
			t.Errorf("voxel %d (|x| < threshold) drawn %v, want the background (black)", i, c)
		}
	}
	// The scale's ends: most negative white-blue side, most positive white-hot side, black
	// in the middle.
	l := newLUT(ColdHot)
	if l[0] != (color.NRGBA{255, 255, 255, 255}) || l[255] != (color.NRGBA{255, 255, 255, 255}) || l[127].R > 5 || l[128].B > 5 {
		t.Errorf("cold_hot ends %v %v, middle %v %v", l[0], l[255], l[127], l[128])
	}
	if l[64].B <= l[64].R || l[192].R <= l[192].B {
		t.Errorf("cold_hot quarter points %v (want blue) %v (want red)", l[64], l[192])
	}
}
