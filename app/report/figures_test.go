package report

import (
	"bytes"
	"context"
	"image"
	"image/png"
	"io"
	"testing"

	"github.com/hubscope/hubscope/ipc"
)

// volumes is an ipc.Service that serves a few volumes of one job (the rest of the Service is
// not used by BundleFigures).
type volumes struct {
	ipc.Service
	v map[string]*ipc.Volume
}

func (s volumes) Volume(_ context.Context, _, name string) (*ipc.Volume, error) {
	if v, ok := s.v[name]; ok {
		return v, nil
	}
	return nil, ipc.Errorf(ipc.CodeNotFound, "no volume %s", name)
}

func (s volumes) OpenFile(context.Context, string, string) (io.ReadCloser, ipc.FileInfo, error) {
	return nil, ipc.FileInfo{}, ipc.Errorf(ipc.CodeNotFound, "no files")
}

// TestBundleFigures draws a ball-shaped brain with one strong hub: the 3D figure shows its
// sphere in its module's colour, and the slice figure shows the hub in hot colours (above the
// hub rule's cut-off), the brain in grey around it, and the colour bar under the planes.
func TestBundleFigures(t *testing.T) {
	const n = 24
	aff := [4][4]float64{{-4, 0, 0, 48}, {0, 4, 0, -48}, {0, 0, 4, -48}, {0, 0, 0, 1}}
	mk := func(name string) *ipc.Volume {
		return &ipc.Volume{Header: ipc.VolumeHeader{Name: name, Dims: [3]int{n, n, n}, Affine: aff}, Data: make([]float32, n*n*n)}
	}
	mask, mean, deg := mk("mask"), mk("mean"), mk("degree")
	hub := [3]int{8, 12, 14}
	for k := range n {
		for j := range n {
			for i := range n {
				if (i-12)*(i-12)+(j-12)*(j-12)+(k-12)*(k-12) <= 81 {
					f := i + n*(j+n*k)
					mask.Data[f], mean.Data[f], deg.Data[f] = 1, float32(100+i), 10
				}
			}
		}
	}
	deg.Data[hub[0]+n*(hub[1]+n*hub[2])] = 90
	mask.Header.Max, deg.Header.Max = 1, 90
	s := ipc.Summary{Job: ipc.Job{ID: "j", Name: "ball"}, Volumes: []string{"mask", "mean", "degree"},
		Hubs: []ipc.Hub{{Voxel: hub, MNI: [3]float64{16, 0, 8}, Degree: 90, Module: 2}}}
	m := &Metrics{}
	m.Hubs.Cutoff = 40
	figs, err := BundleFigures(context.Background(), volumes{v: map[string]*ipc.Volume{"mask": mask, "mean": mean, "degree": deg}}, s, m)
	if err != nil {
		t.Fatal(err)
	}
	if len(figs) != 2 || figs[0].Title != Figure3D || figs[1].Title != FigureSlices {
		t.Fatalf("figures %+v", figs)
	}
	decode := func(b []byte) image.Image {
		img, err := png.Decode(bytes.NewReader(b))
		if err != nil {
			t.Fatal(err)
		}
		return img
	}
	count := func(img image.Image, r image.Rectangle, pred func(r, g, b uint8) bool) int {
		c := 0
		for y := r.Min.Y; y < r.Max.Y; y++ {
			for x := r.Min.X; x < r.Max.X; x++ {
				cr, cg, cb, _ := img.At(x, y).RGBA()
				if pred(uint8(cr>>8), uint8(cg>>8), uint8(cb>>8)) {
					c++
				}
			}
		}
		return c
	}
	mod := ModuleColor(2)
	near := func(a, b uint8) bool { return int(a)-int(b) < 40 && int(b)-int(a) < 40 }
	img3D := decode(figs[0].PNG)
	if c := count(img3D, img3D.Bounds(), func(r, g, b uint8) bool { return near(r, mod.R) && near(g, mod.G) && near(b, mod.B) }); c < 20 {
		t.Errorf("3D figure: %d pixels of the hub's module colour", c)
	}
	sl := decode(figs[1].PNG)
	planes := image.Rect(0, 0, sl.Bounds().Dx(), 200)
	hot := func(r, g, b uint8) bool { return r > 150 && b < 100 && r > g }
	grey := func(r, g, b uint8) bool { return r == g && g == b && r > 30 && r < 250 }
	if c := count(sl, planes, hot); c < 3*4 { // the hub in each of three planes, several pixels wide
		t.Errorf("slice figure: %d hot pixels in the planes, want the hub in all three", c)
	}
	if c := count(sl, planes, grey); c < 2000 {
		t.Errorf("slice figure: %d grey pixels of anatomy", c)
	}
	bar := image.Rect(0, 200, sl.Bounds().Dx(), sl.Bounds().Dy())
	if c := count(sl, bar, hot); c < 500 {
		t.Errorf("slice figure: %d hot pixels under the planes, want the colour bar", c)
	}
}
