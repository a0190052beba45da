// Package render is HubScope's 3D software renderer: it draws a brain surface and the network's
// hubs into an image.RGBA with no GPU and no GUI toolkit (the app wraps the image in a Fyne
// canvas; tests compare it with golden images).
//
// A frame shows a Scene: a triangle Mesh of the brain (opaque, or a translucent "glass brain"
// that shows the hubs inside it) and hub Spheres sized and coloured by the caller (by degree
// and module: HubRadius makes a sphere's area proportional to degree, ModuleColors gives a
// colour-blind-aware qualitative palette). A Camera orbits
// the scene's centre; StandardView gives the six anatomical views (left, right, anterior,
// posterior, superior, inferior) in RAS+ world space, with the convention stated on Camera.
//
//	mesh, err := render.MaskSurface(mask, dims, affine) // brain mask → smooth surface (mm)
//	scene := &render.Scene{Surface: mesh, Spheres: hubs, Glass: true}
//	cam, _ := render.StandardView("left")
//	r := render.NewRenderer(800, 600)
//	img := r.Render(scene, cam)  // valid until the next Render
//	id, ok := r.Pick(x, y)       // the hub under a click in that frame
//	err = render.SavePNG(path, img)
//
// MaskSurface is built from MarchingCubes, Downsample, BlurVolume and Mesh.Smooth, which are
// exported for other volumes (e.g. a thresholded statistical map).
//
// How a frame is drawn: vertices are transformed (go-gl/mathgl view matrix) and shaded once
// (Lambert diffuse plus Blinn–Phong specular from a headlight), triangles facing away are
// culled, triangles crossing the near plane are clipped, and the rest are rasterised with
// fixed-point edge functions and a 1/z depth buffer. Hubs are not tessellated: each is
// ray-cast per pixel inside its exact screen bounding box (sphere impostors), which gives exact
// silhouettes, depths and normals for a few operations per pixel. The frame is cut into
// horizontal bands drawn concurrently (one goroutine per core), each band clearing, drawing and
// compositing its own rows, so no locks are taken and the result does not depend on the number
// of workers. Surface and spheres keep separate depth buffers so that a glass surface can be
// composited over the spheres behind it.
//
// Benchmark C3 (BENCHMARKS.md): BenchmarkFrame800x600Hubs2000.
package render
