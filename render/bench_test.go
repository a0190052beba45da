package render

import (
	"math/rand/v2"
	"testing"

	"github.com/go-gl/mathgl/mgl32"

	"github.com/hubscope/hubscope/helper/synth"
)

// hubSpheres places n hub spheres on distinct voxels of the 2 mm MNI mask (seeded), radius
// from HubRadius of a uniform random degree, coloured by one of 12 modules.
func hubSpheres(b testing.TB, n int) []Sphere {
	mask, affine, err := synth.DefaultMask()
	if err != nil {
		b.Fatal(err)
	}
	var in []int
	for i, v := range mask.In {
		if v {
			in = append(in, i)
		}
	}
	rng := rand.New(rand.NewPCG(2000, 3))
	rng.Shuffle(len(in), func(i, j int) { in[i], in[j] = in[j], in[i] })
	colors := ModuleColors(12)
	nx, ny := mask.Dims[0], mask.Dims[1]
	out := make([]Sphere, n)
	for h := range out {
		v := in[h]
		i, j, k := float64(v%nx), float64(v/nx%ny), float64(v/(nx*ny))
		var c mgl32.Vec3
		for r := 0; r < 3; r++ {
			c[r] = float32(affine[r][0]*i + affine[r][1]*j + affine[r][2]*k + affine[r][3])
		}
		out[h] = Sphere{Center: c, Radius: HubRadius(rng.Float64(), 1), Color: colors[rng.IntN(12)], ID: v}
	}
	return out
}

// BenchmarkFrame800x600Hubs2000 is benchmark C3: one 800×600 frame of the MNI152 2 mm brain
// surface (mniBrainSurface: full-resolution marching cubes, ≈ 65,000 triangles) with
// 2,000 hub spheres on mask voxels, at the default zoom (the brain fills the frame's height),
// the camera turning 7° per frame as while dragging.
func BenchmarkFrame800x600Hubs2000(b *testing.B) { benchFrame(b, 2000) }

// BenchmarkFrame800x600Hubs5000 is the same frame with 5,000 hub spheres: the app's goal of
// one 3D frame in ≤ 33 ms at 5,000 hubs.
func BenchmarkFrame800x600Hubs5000(b *testing.B) { benchFrame(b, 5000) }

// BenchmarkFrame800x600Hubs2000Links2000 is the 2,000-hub frame with the connectome view's
// densest drawing: 2,000 links between random pairs of hubs (hub_links.tsv's size), 1 to 5
// pixels wide.
func BenchmarkFrame800x600Hubs2000Links2000(b *testing.B) { benchFrameLinks(b, 2000, 2000) }

// BenchmarkFrame800x600Hubs2000Links200 is the same with the view's first drawing, 200 links.
func BenchmarkFrame800x600Hubs2000Links200(b *testing.B) { benchFrameLinks(b, 2000, 200) }

func benchFrame(b *testing.B, hubs int) { benchFrameLinks(b, hubs, 0) }

func benchFrameLinks(b *testing.B, hubs, links int) {
	s := &Scene{Surface: mniBrainSurface(b), Spheres: hubSpheres(b, hubs)}
	rng := rand.New(rand.NewPCG(3, 5))
	for i := 0; i < links; i++ {
		p, q := s.Spheres[rng.IntN(hubs)], s.Spheres[rng.IntN(hubs)]
		w := rng.Float64()
		s.Edges = append(s.Edges, Edge{A: p.Center, B: q.Center, Width: EdgeWidth(w, 1), Color: EdgeColor(w, 1)})
	}
	for _, mode := range []struct {
		name  string
		glass bool
	}{{"opaque", false}, {"glass", true}} {
		b.Run(mode.name, func(b *testing.B) {
			s.Glass = mode.glass
			r := NewRenderer(800, 600)
			c := Camera{Azimuth: 0, Elevation: 15, Zoom: 1}
			r.Render(s, c)
			b.ResetTimer()
			cpu0 := processCPU()
			for i := 0; i < b.N; i++ {
				c.Rotate(7, 0)
				r.Render(s, c)
			}
			b.ReportMetric(float64(b.Elapsed().Microseconds())/1000/float64(b.N), "ms/frame")
			// CPU time of all workers: on a machine shared with other work, wall time grows
			// but this does not; wall time on idle cores is about this / cores.
			if cpu := processCPU() - cpu0; cpu > 0 {
				b.ReportMetric(float64(cpu.Microseconds())/1000/float64(b.N), "cpu-ms/frame")
			}
		})
	}
}

// BenchmarkMaskSurfaceMNI2mm times the surface extraction the app does once per scan
// (blur, marching cubes, smoothing).
func BenchmarkMaskSurfaceMNI2mm(b *testing.B) {
	mask, affine, err := synth.DefaultMask()
	if err != nil {
		b.Fatal(err)
	}
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		if _, err := MaskSurface(mask.In, mask.Dims, affine); err != nil {
			b.Fatal(err)
		}
	}
}
