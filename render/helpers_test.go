package render

import (
	"image/color"
	"sync"
	"testing"

	"github.com/go-gl/mathgl/mgl32"

	"github.com/hubscope/hubscope/helper/synth"
)

var (
	mniOnce    sync.Once
	mniSurface *Mesh
	mniErr     error
)

// mniBrainSurface is the surface of the embedded MNI152 2 mm brain mask as the app makes it
// (MaskSurface).
func mniBrainSurface(t testing.TB) *Mesh {
	t.Helper()
	mniOnce.Do(func() {
		m, affine, err := synth.DefaultMask()
		if err != nil {
			mniErr = err
			return
		}
		mniSurface, mniErr = MaskSurface(m.In, m.Dims, affine)
	})
	if mniErr != nil {
		t.Fatal(mniErr)
	}
	return mniSurface
}

// phantomScene is the golden images' scene: the standard phantom (helper/synth, default
// parameters but 40 volumes, which is all the ground truth needs) on the embedded 4 mm demo
// mask. The surface is that mask's MaskSurface; the spheres are the 40
// planted hubs at their voxels' centres, coloured by the module the phantom put each hub in and
// sized by how many modules it couples (2 or 3: 4 or 5 mm), the planted stand-in for degree.
// Using the phantom's truth rather than random points puts the hubs where the pipeline will
// find them and ties the colours to real module labels.
func phantomScene(t testing.TB) *Scene {
	t.Helper()
	mask, affine, err := synth.DemoMask()
	if err != nil {
		t.Fatal(err)
	}
	p := synth.DefaultParams()
	p.Length = 40
	_, truth, err := synth.Generate(mask, affine, p)
	if err != nil {
		t.Fatal(err)
	}
	surface, err := MaskSurface(mask.In, mask.Dims, affine)
	if err != nil {
		t.Fatal(err)
	}
	// node n is the n-th voxel of the mask in increasing flat index
	var flat []int
	for i, in := range mask.In {
		if in {
			flat = append(flat, i)
		}
	}
	colors := ModuleColors(p.Modules)
	nx, ny := mask.Dims[0], mask.Dims[1]
	s := &Scene{Surface: surface, Background: color.NRGBA{R: 16, G: 18, B: 24, A: 255}}
	for h, node := range truth.Hubs {
		v := flat[node]
		i, j, k := float64(v%nx), float64(v/nx%ny), float64(v/(nx*ny))
		var c mgl32.Vec3
		for r := 0; r < 3; r++ {
			c[r] = float32(affine[r][0]*i + affine[r][1]*j + affine[r][2]*k + affine[r][3])
		}
		s.Spheres = append(s.Spheres, Sphere{
			Center: c,
			Radius: float32(2 + len(truth.HubModules[h])),
			Color:  colors[truth.Modules[node]-1],
			ID:     node,
		})
	}
	return s
}
