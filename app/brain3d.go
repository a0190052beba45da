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

// BrainScene builds the 3D view's scene of a result: the analysis mask's surface (marching
// cubes at 0.5 over the mask, Taubin-smoothed) as a glass brain, and one sphere per hub at its
// world position, coloured by module (render.ModuleColors) and sized by degree. Sphere IDs are
// indices into s.Hubs.
func BrainScene(ctx context.Context, svc ipc.Service, s ipc.Summary) (*render.Scene, error) {
	scene := &render.Scene{Glass: true}
	mask, err := svc.Volume(ctx, s.Job.ID, "mask")
	if err != nil {
		return nil, fmt.Errorf("brain surface of %s: %w", s.Job.Name, err)
	}
	data := make([]float32, len(mask.Data))
	for i, v := range mask.Data {
		if v > 0 && !math.IsNaN(float64(v)) {
			data[i] = 1
		}
	}
	dims, aff := mask.Header.Dims, mask.Header.Affine
	// Fine grids (≤ 2 mm) are averaged 2×2×2 first: the same outline at an eighth of the
	// triangles, which keeps frames fast on a laptop CPU.
	vox := math.Sqrt(aff[0][0]*aff[0][0] + aff[1][0]*aff[1][0] + aff[2][0]*aff[2][0])
	if vox <= 2.5 {
		if data, dims, aff, err = render.Downsample(data, dims, aff, 2); err != nil {
			return nil, fmt.Errorf("brain surface of %s: %w", s.Job.Name, err)
		}
	}
	mesh, err := render.MarchingCubes(data, dims, aff, 0.5)
	if err != nil {
		return nil, fmt.Errorf("brain surface of %s: %w", s.Job.Name, err)
	}
	mesh.Smooth(10)
	mesh.ComputeNormals()
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
