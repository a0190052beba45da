package app

import (
	"context"

	"github.com/hubscope/hubscope/app/report"
	"github.com/hubscope/hubscope/ipc"
	"github.com/hubscope/hubscope/render"
)

// BrainScene builds the 3D view's scene of a result (report.BrainScene: the scene the report's
// 3D figure shows too): the analysis mask's surface as a glass brain and one sphere per hub,
// coloured by module and sized by degree. Sphere IDs are indices into s.Hubs.
func BrainScene(ctx context.Context, svc ipc.Service, s ipc.Summary) (*render.Scene, error) {
	return report.BrainScene(ctx, svc, s)
}

// HubSpheres places hubs as spheres (report.HubSpheres: render.HubRadius sizes, module colours).
func HubSpheres(hubs []ipc.Hub) []render.Sphere { return report.HubSpheres(hubs) }
