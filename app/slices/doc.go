// Package slices is HubScope's slice viewer: axial, coronal and sagittal views of a finished
// job's background (the mean EPI, else the analysis mask) with one overlay chosen from the job's
// volumes (hubs in their modules' colours, modules, degree, strength, hub z, atlas, a seed map
// …), a crosshair shared by the three views, and the overlay's controls (colour scale hot or
// viridis for quantities, module colours for labels; threshold; opacity).
//
//	cache := slices.NewVolumeCache(client, 0) // share fetched volumes between the tabs
//	v := slices.New(cache)                    // a fyne widget
//	v.OnSelect = func(voxel [3]int) { … }     // the user tapped a voxel (or ended a drag)
//	v.Load(ctx, jobID, summary)               // returns at once; OnLoaded reports
//	v.SetCrosshair(voxel)                     // e.g. a hub picked in the 3D view or the hub table
//	v.SetOverlay(seedMap)                     // any volume on the job's grid, e.g. a seed map
//	v.ShowVolume("degree")                    // switch to another of the job's volumes
//	v.SavePNG(path)                           // the three views side by side
//
// Geometry. Each view draws one pixel per voxel into an image.RGBA (no per-pixel Fyne objects)
// and scales it to the voxels' physical size (mm, from the affine's column norms). The grid is
// not resliced: each grid axis is shown along the world axis (RAS+) it is closest to
// (OrientationOf), as MRIcron and FSLeyes do in voxel mode. Axial and coronal views follow the
// radiological convention by default (the patient's left on the screen's right; SetRadiological
// switches to neurological) and every view labels its edges (L/R, A/P, S/I) and states the
// convention under the views. Sagittal views put anterior on the left. A tap at a pixel selects
// the voxel drawn there (Viewer.OnSelect); voxel → mm is World (x = A·(i, j, k, 1)).
//
// Overlays. Quantities (degree, seed maps …) below the threshold are transparent; above it the
// colour scale runs from the threshold to the volume's maximum (or to SetScaleMax's value, which
// the Dynamics tab uses to keep one scale across windows). Categorical volumes (modules, atlas)
// are coloured by ModuleColor, render.ModuleColors' palette, so a module has one colour in the
// slices, the inspector and the 3D view; the "hubs" overlay shows hub voxels in their modules'
// colours (HubsByModule). NaN voxels (outside the mask) are never coloured.
//
// Threads. Methods and callbacks run on the UI goroutine. Volumes are fetched on goroutines
// through a VolumeCache (one fetch per job and volume, least recently used dropped beyond its
// byte budget) and applied with fyne.Do; choosing another overlay or job cancels the fetches
// the user moved past.
//
// Sub-packages: lineplot draws the small line plots of the inspector and the Dynamics tab;
// slicestest holds the synthetic phantom job and scripted ipc.Service the tests use.
package slices
