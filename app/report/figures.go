package report

import (
	"bytes"
	"context"
	"fmt"
	"image"
	"image/color"
	"image/draw"
	"image/png"
	"math"
	"slices"

	"github.com/go-gl/mathgl/mgl32"
	"golang.org/x/image/font"
	"golang.org/x/image/font/basicfont"
	"golang.org/x/image/math/fixed"

	"github.com/hubscope/hubscope/ipc"
	"github.com/hubscope/hubscope/render"
)

// BrainScene builds the 3D view's scene of a result: the analysis mask's surface
// (render.MaskSurface) as a glass brain, and one sphere per hub at its world position,
// coloured by module (render.ModuleColors) and sized by degree. Sphere IDs are indices into
// s.Hubs. The app's 3D view and the report's 3D figure show this one scene.
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
			Color:  ModuleColor(h.Module),
			ID:     i,
		}
	}
	return out
}

// Figure titles of BundleFigures.
const (
	Figure3D     = "Hubs in 3D, coloured by module (seen from the left)"
	FigureSlices = "Degree of the hubs over the anatomy, through the strongest hub"
)

// BundleFigures renders a finished job's figures from the helper's volumes, for a report made
// without the app's views (hubscope-helper report): the hubs in 3D over the glass brain, and
// the degree map (hubs only: degree above the hub rule's cut-off, hot colours) over the
// anatomy in three planes through the strongest hub, with its colour bar.
func BundleFigures(ctx context.Context, svc ipc.Service, s ipc.Summary, m *Metrics) ([]Figure, error) {
	var figs []Figure
	scene, err := BrainScene(ctx, svc, s)
	if err != nil {
		return nil, err
	}
	cam, _ := render.StandardView("left")
	scene.Background = color.NRGBA{255, 255, 255, 255}
	img := render.NewRenderer(480, 400).Render(scene, cam)
	b, err := encodePNG(img)
	if err != nil {
		return nil, err
	}
	figs = append(figs, Figure{Title: Figure3D, PNG: b})
	if len(s.Hubs) == 0 || !slices.Contains(s.Volumes, "degree") {
		return figs, nil
	}
	bgName := "mask"
	for _, n := range []string{"template", "mean"} {
		if slices.Contains(s.Volumes, n) {
			bgName = n
			break
		}
	}
	bg, err := svc.Volume(ctx, s.Job.ID, bgName)
	if err != nil {
		return nil, fmt.Errorf("slice figure of %s: %w", s.Job.Name, err)
	}
	deg, err := svc.Volume(ctx, s.Job.ID, "degree")
	if err != nil {
		return nil, fmt.Errorf("slice figure of %s: %w", s.Job.Name, err)
	}
	if bg.Header.Dims != deg.Header.Dims {
		// The template lies on its own grid; the scan's mean or mask is on the maps' grid.
		if bg, err = svc.Volume(ctx, s.Job.ID, "mask"); err != nil {
			return nil, fmt.Errorf("slice figure of %s: %w", s.Job.Name, err)
		}
		bgName = "mask"
	}
	cut := m.Hubs.Cutoff
	words := map[string]string{"template": "MNI152 T1 template", "mean": "mean EPI", "mask": "brain mask"}[bgName]
	sl, err := hubSlices(bg, deg, s.Hubs[0].Voxel, cut, fmt.Sprintf("degree (links); hubs: degree > %.1f; background: %s", cut, words))
	if err != nil {
		return nil, fmt.Errorf("slice figure of %s: %w", s.Job.Name, err)
	}
	if b, err = encodePNG(sl); err != nil {
		return nil, err
	}
	return append(figs, Figure{Title: FigureSlices, PNG: b}), nil
}

func encodePNG(img image.Image) ([]byte, error) {
	var b bytes.Buffer
	if err := png.Encode(&b, img); err != nil {
		return nil, fmt.Errorf("report figure: %w", err)
	}
	return b.Bytes(), nil
}

// hubSlices draws the axial, coronal and sagittal planes through voxel at of ov over bg (both
// on one grid) in neurological convention (the subject's left on the image's left; the letters
// say so), values of ov above cut in the hot colour map from cut to ov's maximum, and under
// them a colour bar with its range and caption.
func hubSlices(bg, ov *ipc.Volume, at [3]int, cut float64, caption string) (*image.RGBA, error) {
	d := bg.Header.Dims
	if ov.Header.Dims != d || len(bg.Data) != d[0]*d[1]*d[2] || len(ov.Data) != len(bg.Data) {
		return nil, fmt.Errorf("background %v and overlay %v are not on one grid", d, ov.Header.Dims)
	}
	aff := bg.Header.Affine
	// The grid axis closest to each world axis (x: left→right, y: posterior→anterior,
	// z: inferior→superior), whether it runs against it, and its voxel size.
	var axis, sign [3]int
	var spacing [3]float64
	used := [3]bool{}
	for w := range 3 {
		best := -1.0
		for a := range 3 {
			if used[a] {
				continue
			}
			n := math.Sqrt(aff[0][a]*aff[0][a] + aff[1][a]*aff[1][a] + aff[2][a]*aff[2][a])
			if n == 0 {
				continue
			}
			if c := math.Abs(aff[w][a]) / n; c > best {
				best, axis[w], spacing[w] = c, a, n
				sign[w] = 1
				if aff[w][a] < 0 {
					sign[w] = -1
				}
			}
		}
		if best < 0 {
			return nil, fmt.Errorf("the grid's affine is singular")
		}
		used[axis[w]] = true
	}
	// Background grey levels: the 2nd to 98th percentile of its non-zero voxels.
	var vals []float32
	for _, v := range bg.Data {
		if v != 0 && !math.IsNaN(float64(v)) {
			vals = append(vals, v)
		}
	}
	slices.Sort(vals)
	lo, hi := float32(0), float32(1)
	flat := len(vals) == 0 || vals[0] == vals[len(vals)-1]
	if len(vals) > 0 {
		lo, hi = vals[len(vals)*2/100], vals[(len(vals)-1)*98/100]
		if hi <= lo {
			lo, hi = 0, vals[len(vals)-1]
		}
	}
	top := float64(ov.Header.Max)
	if !(top > cut) {
		top = cut + 1
	}
	// Each plane: the world axes along the image's x and y, and the fixed one.
	planes := []struct {
		name          string
		col, row, fix int
		left, right   string
	}{{"axial", 0, 1, 2, "L", "R"}, {"coronal", 0, 2, 1, "L", "R"}, {"sagittal", 1, 2, 0, "P", "A"}}
	extent := func(w int) float64 { return float64(d[axis[w]]) * spacing[w] }
	const planeH = 200
	mmPerPx := max(extent(1), extent(2)) / planeH
	widths := make([]int, len(planes))
	width := 0
	for i, p := range planes {
		widths[i] = int(math.Ceil(extent(p.col) / mmPerPx))
		width += widths[i]
	}
	const barH = 44
	img := image.NewRGBA(image.Rect(0, 0, width+2*(len(planes)-1), planeH+barH))
	draw.Draw(img, img.Bounds(), image.NewUniform(color.Black), image.Point{}, draw.Src)
	// voxel index along grid axis a of world position t mm from the low end of world axis w.
	index := func(w int, t float64) int {
		i := int(t / spacing[w])
		if sign[w] < 0 {
			i = d[axis[w]] - 1 - i
		}
		return i
	}
	x0 := 0
	for pi, p := range planes {
		nr := int(math.Ceil(extent(p.row) / mmPerPx))
		yoff := (planeH - nr) / 2
		for py := range nr {
			for px := range widths[pi] {
				var v [3]int
				v[axis[p.fix]] = at[axis[p.fix]]
				v[axis[p.col]] = index(p.col, (float64(px)+0.5)*mmPerPx)
				v[axis[p.row]] = index(p.row, (float64(nr-1-py)+0.5)*mmPerPx)
				if v[0] < 0 || v[1] < 0 || v[2] < 0 || v[0] >= d[0] || v[1] >= d[1] || v[2] >= d[2] {
					continue
				}
				f := v[0] + d[0]*(v[1]+d[1]*v[2])
				g := float64((bg.Data[f] - lo) / (hi - lo))
				if math.IsNaN(g) {
					g = 0
				}
				if flat {
					g *= 0.4 // a mask: brain in mid grey, so that the hot colours stand out
				}
				c := grey(g)
				if o := float64(ov.Data[f]); o > cut {
					c = hubColour((o - cut) / (top - cut))
				}
				img.SetRGBA(x0+px, yoff+py, c)
			}
		}
		// The crosshair's position in this plane, as ticks on the plane's edges.
		cx := int((float64(pos(at[axis[p.col]], sign[p.col], d[axis[p.col]])) + 0.5) * spacing[p.col] / mmPerPx)
		cy := yoff + nr - 1 - int((float64(pos(at[axis[p.row]], sign[p.row], d[axis[p.row]]))+0.5)*spacing[p.row]/mmPerPx)
		for t := range 6 {
			img.SetRGBA(x0+cx, yoff+t, color.RGBA{0, 200, 255, 255})
			img.SetRGBA(x0+cx, yoff+nr-1-t, color.RGBA{0, 200, 255, 255})
			img.SetRGBA(x0+t, cy, color.RGBA{0, 200, 255, 255})
			img.SetRGBA(x0+widths[pi]-1-t, cy, color.RGBA{0, 200, 255, 255})
		}
		text(img, x0+3, 13, p.name)
		text(img, x0+3, planeH/2+4, p.left)
		text(img, x0+widths[pi]-9, planeH/2+4, p.right)
		x0 += widths[pi] + 2
	}
	// The colour bar: cut at its left end, the maximum at its right.
	bw := min(img.Bounds().Dx()-120, 300)
	bx, by := 60, planeH+8
	for x := range bw {
		c := hubColour(float64(x) / float64(bw-1))
		for y := range 10 {
			img.SetRGBA(bx+x, by+y, c)
		}
	}
	text(img, 4, by+10, fmt.Sprintf("%.0f", cut))
	text(img, bx+bw+6, by+10, fmt.Sprintf("%.0f", top))
	text(img, 4, by+30, caption)
	return img, nil
}

// pos is a voxel's place along a world axis counted from that axis's low end.
func pos(i, sign, n int) int {
	if sign < 0 {
		return n - 1 - i
	}
	return i
}

func grey(t float64) color.RGBA {
	g := uint8(math.Round(255 * math.Max(0, math.Min(1, t))))
	return color.RGBA{g, g, g, 255}
}

// hubColour is the colour of a hub whose degree lies the share f of the way from the hub
// rule's cut-off to the maximum: the red-to-yellow part of the hot map (t from 0.28 to 0.66),
// leaving out its dark start and its white end, which would vanish in the grey anatomy.
func hubColour(f float64) color.RGBA { return hotColour(0.28 + 0.38*math.Max(0, math.Min(1, f))) }

// hotColour is the hot colour map (black–red–yellow–white) at t in [0, 1], as the app's
// slices draw positive maps.
func hotColour(t float64) color.RGBA {
	ch := func(v float64) uint8 { return uint8(math.Round(255 * math.Max(0, math.Min(1, v)))) }
	return color.RGBA{ch(3 * t), ch(3*t - 1), ch(3*t - 2), 255}
}

func text(img *image.RGBA, x, y int, s string) {
	dr := font.Drawer{Dst: img, Src: image.NewUniform(color.White), Face: basicfont.Face7x13, Dot: fixed.P(x, y)}
	dr.DrawString(s)
}
