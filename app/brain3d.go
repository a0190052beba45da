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
	// The renderer's one recipe from a mask to a brain surface (coarsened to ~2 mm, blurred,
	// cut at 0.5, Taubin-smoothed), so the app shows what render's golden images test.
	mesh, err := render.MaskSurface(in, mask.Header.Dims, aff)
	if err != nil {
		return nil, fmt.Errorf("brain surface of %s: %w", s.Job.Name, err)
	}
	scene.Surface = mesh
	scene.Spheres = HubSpheres(s.Hubs)
	return scene, nil
}

// HubSpheres places hubs as spheres at their world positions, sized by render.HubRadius (area
// proportional to degree, relative to the largest hub's) and coloured by module.
func HubSpheres(hubs []ipc.Hub) []render.Sphere {
	top := 0
	for _, h := range hubs {
		top = max(top, h.Degree)
	}
	out := make([]render.Sphere, len(hubs))
	for i, h := range hubs {
		out[i] = render.Sphere{
			Center: mgl32.Vec3{float32(h.MNI[0]), float32(h.MNI[1]), float32(h.MNI[2])},
			Radius: render.HubRadius(float64(h.Degree), float64(top)),
			Color:  report.ModuleColor(h.Module),
			ID:     i,
		}
	}
	return out
}
