package app

import (
	"context"
	"fmt"
	"math"

	"github.com/go-gl/mathgl/mgl32"

	"github.com/hubscope/hubscope/app/report"
	"github.com/hubscope/hubscope/ipc"
	"github.com/hubscope/hubscope/render"
)

// BrainScene builds the 3D view's scene of a result: the analysis mask's surface
// (render.MaskSurface) as a glass brain, and one sphere per hub at its
// world position, coloured by module (render.ModuleColors) and sized by degree. Sphere IDs are
// indices into s.Hubs.
func BrainScene(ctx context.Context, svc ipc.Service, s ipc.Summary) (*render.Scene, error) {
	scene := &render.Scene{Glass: true}
	mask, err := svc.Volume(ctx, s.Job.ID, "mask")
	if err != nil {
		return nil, fmt.Errorf("brain surface of %s: %w", s.Job.Name, err)
	}
	in := make([]bool, len(mask.Data))
	for i, v := range mask.Data {
		in[i] = v > 0 && !math.IsNaN(float64(v))
	}
	aff := mask.Header.Affine
	vox := math.Sqrt(aff[0][0]*aff[0][0] + aff[1][0]*aff[1][0] + aff[2][0]*aff[2][0])
	// The renderer's one recipe from a mask to a brain surface (coarsened to ~2 mm, blurred,
	// cut at 0.5, Taubin-smoothed), so the app shows what render's golden images test.
	mesh, err := render.MaskSurface(in, mask.Header.Dims, aff)
	if err != nil {
		return nil, fmt.Errorf("brain surface of %s: %w", s.Job.Name, err)
	}
	scene.Surface = mesh
	scene.Spheres = HubSpheres(s.Hubs, vox)
	return scene, nil
}

// HubSpheres places hubs as spheres: radius from 0.6 to 1.2 voxels, growing with degree over
// the hubs' range, so the strongest hubs stand out without hiding their neighbours.
func HubSpheres(hubs []ipc.Hub, voxelMM float64) []render.Sphere {
	lo, hi := math.MaxInt, 0
	for _, h := range hubs {
		lo, hi = min(lo, h.Degree), max(hi, h.Degree)
	}
	out := make([]render.Sphere, len(hubs))
	for i, h := range hubs {
		t := 1.0
		if hi > lo {
			t = float64(h.Degree-lo) / float64(hi-lo)
		}
		out[i] = render.Sphere{
			Center: mgl32.Vec3{float32(h.MNI[0]), float32(h.MNI[1]), float32(h.MNI[2])},
			Radius: float32(voxelMM * (0.6 + 0.6*t)),
			Color:  report.ModuleColor(h.Module),
			ID:     i,
		}
	}
	return out
}
