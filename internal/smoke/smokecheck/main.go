// Command smokecheck checks what `hubscope --smoke-dump DIR` wrote in scripts/gui-smoke.sh:
// the 3D view inside the window screenshot shows hub spheres in their modules' colours, the
// hub table lists atlas regions, and the slice viewer's snapshot (slices.png) shows the hub
// at its crosshair in its module's colour over the background.
//
//	go run ./internal/smoke/smokecheck DIR [SCREENSHOT.png [SLICES-SCREENSHOT.png]]
//
// Screenshots (the X server's own, from ImageMagick's import) are checked for being the
// window's size or larger and not blank; the second, taken with the Slices tab shown, for
// overlay colours inside the slice viewer (DIR/slices-layout.json).
package main

import (
	"encoding/csv"
	"encoding/json"
	"fmt"
	"image"
	"image/color"
	"image/png"
	"os"
	"path/filepath"
	"strconv"

	"github.com/hubscope/hubscope/internal/smoke"
	"github.com/hubscope/hubscope/render"
)

func main() {
	if len(os.Args) >= 5 && os.Args[1] == "tab" {
		// smokecheck tab DIR TAB SCREENSHOT [LESION.tsv]
		if err := checkTab(os.Args[2], os.Args[3], os.Args[4], os.Args[5:]); err != nil {
			fmt.Fprintln(os.Stderr, "smokecheck: FAIL:", err)
			os.Exit(1)
		}
		return
	}
	if len(os.Args) == 5 && os.Args[1] == "group" {
		// smokecheck group DIR SCREENSHOT SUBJECTS
		if err := checkGroup(os.Args[2], os.Args[3], os.Args[4]); err != nil {
			fmt.Fprintln(os.Stderr, "smokecheck: FAIL:", err)
			os.Exit(1)
		}
		return
	}
	if len(os.Args) < 2 {
		fmt.Fprintln(os.Stderr, "usage: smokecheck DIR [SCREENSHOT.png…]")
		os.Exit(2)
	}
	if err := check(os.Args[1], os.Args[2:]); err != nil {
		fmt.Fprintln(os.Stderr, "smokecheck: FAIL:", err)
		os.Exit(1)
	}
}

func readPNG(path string) (image.Image, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	img, err := png.Decode(f)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return img, nil
}

func check(dir string, shots []string) error {
	// The hub table: regions named, modules numbered.
	f, err := os.Open(filepath.Join(dir, "hubs.tsv"))
	if err != nil {
		return err
	}
	r := csv.NewReader(f)
	r.Comma = '\t'
	rows, err := r.ReadAll()
	f.Close()
	if err != nil {
		return fmt.Errorf("hubs.tsv: %w", err)
	}
	if len(rows) < 2 || len(rows[0]) < 9 || rows[0][1] != "Region" || rows[0][8] != "Module" {
		return fmt.Errorf("hubs.tsv: %d rows, header %q", len(rows), rows[0])
	}
	named, modules := 0, map[int]int{}
	for _, row := range rows[1:] {
		if row[1] != "" && row[1] != "outside the atlas" {
			named++
		}
		if m, err := strconv.Atoi(row[8]); err == nil && m > 0 {
			modules[m]++
		}
	}
	if named == 0 {
		return fmt.Errorf("hubs.tsv: none of %d hubs has an atlas region", len(rows)-1)
	}
	fmt.Printf("hub table: %d hubs, %d with atlas regions, %d modules\n", len(rows)-1, named, len(modules))

	// The 3D view inside the window: pixels in the module palette's colours.
	var l smoke.Layout
	b, err := os.ReadFile(filepath.Join(dir, "layout.json"))
	if err != nil {
		return err
	}
	if err := json.Unmarshal(b, &l); err != nil {
		return fmt.Errorf("layout.json: %w", err)
	}
	// The connectome: the bundle's links among the hubs are drawn (app/connectome.go).
	fmt.Printf("3D view: %d links drawn (bundle has a connectome: %v)\n", l.Links, l.LinkFiles)
	if l.LinkFiles && l.Links == 0 {
		return fmt.Errorf("layout.json: the bundle has hub_links.tsv or network.edge but the 3D view draws no link")
	}
	// Fyne's own capture (window.png) reads the GL framebuffer, which Xvfb's software GL
	// returns black; the X server's screenshot (first extra argument) is what a user sees.
	// Without a window manager the window lies at the screen's origin, so layout.json's
	// coordinates hold for both.
	shot := filepath.Join(dir, "window.png")
	if len(shots) > 0 {
		shot = shots[0]
	}
	win, err := readPNG(shot)
	if err != nil {
		return err
	}
	v := l.View3D
	area := image.Rect(v.X, v.Y, v.X+v.W, v.Y+v.H).Intersect(win.Bounds())
	if area.Dx() < 100 || area.Dy() < 100 {
		return fmt.Errorf("3D view occupies %v of the %v window", area, win.Bounds())
	}
	maxModule := 0
	for m := range modules {
		maxModule = max(maxModule, m)
	}
	palette := render.ModuleColors(maxModule)
	seen := map[int]int{}
	for y := area.Min.Y; y < area.Max.Y; y++ {
		for x := area.Min.X; x < area.Max.X; x++ {
			r, g, bb, _ := win.At(x, y).RGBA()
			for m := range modules {
				// Shaded spheres darken towards their rims: a pixel counts when it is a shade
				// of the module's colour (the same hue ratios at 55–100 % brightness).
				p := palette[m-1]
				if shadeOf(uint8(r>>8), uint8(g>>8), uint8(bb>>8), p.R, p.G, p.B) {
					seen[m]++
				}
			}
		}
	}
	hit := 0
	for m, n := range seen {
		if n >= 20 && modules[m] > 0 {
			hit++
		}
	}
	fmt.Printf("3D view %v: module colours seen (module: pixels) %v\n", area, seen)
	want := min(2, len(modules))
	if hit < want {
		return fmt.Errorf("3D view shows %d module colours with ≥ 20 pixels, want at least %d", hit, want)
	}

	// The slice viewer's snapshot: the hub at the crosshair is drawn in its module's colour.
	var si smoke.SlicesInfo
	if b, err = os.ReadFile(filepath.Join(dir, "slices.json")); err != nil {
		return err
	}
	if err := json.Unmarshal(b, &si); err != nil {
		return fmt.Errorf("slices.json: %w", err)
	}
	if si.Module < 1 || si.Module > maxModule {
		return fmt.Errorf("slices.json: the crosshair %v is on no hub of modules 1…%d (module %d)", si.Crosshair, maxModule, si.Module)
	}
	snap, err := readPNG(filepath.Join(dir, "slices.png"))
	if err != nil {
		return err
	}
	n := countOverlaid(snap, snap.Bounds(), palette[si.Module-1], si.Opacity, 3)
	fmt.Printf("slices.png %v, overlay %q at %.2f opacity: %d pixels of module %d's colour (hub at %v)\n", snap.Bounds(), si.Overlay, si.Opacity, n, si.Module, si.Crosshair)
	// One hub voxel is ≥ 8 × 8 pixels in each of the three views (minus the crosshair's lines).
	if n < 40 {
		return fmt.Errorf("slices.png shows %d pixels of module %d's colour over the background, want ≥ 40", n, si.Module)
	}
	if len(shots) > 1 {
		var sl smoke.SlicesLayout
		if b, err = os.ReadFile(filepath.Join(dir, "slices-layout.json")); err != nil {
			return err
		}
		if err := json.Unmarshal(b, &sl); err != nil {
			return fmt.Errorf("slices-layout.json: %w", err)
		}
		shot, err := readPNG(shots[1])
		if err != nil {
			return err
		}
		v := sl.Slices
		area := image.Rect(v.X, v.Y, v.X+v.W, v.Y+v.H).Intersect(shot.Bounds())
		if area.Dx() < 200 || area.Dy() < 100 {
			return fmt.Errorf("slice viewer occupies %v of the %v window", area, shot.Bounds())
		}
		// The screen scales each voxel to several pixels with no smoothing; GL may round a level.
		n := countOverlaid(shot, area, palette[si.Module-1], si.Opacity, 6)
		fmt.Printf("slice viewer %v in %s: %d pixels of module %d's colour\n", area, shots[1], n, si.Module)
		if n < 40 {
			return fmt.Errorf("the slice viewer on screen shows %d pixels of module %d's colour, want ≥ 40", n, si.Module)
		}
	}

	for _, s := range shots {
		img, err := readPNG(s)
		if err != nil {
			return err
		}
		if img.Bounds().Dx() < win.Bounds().Dx()/2 {
			return fmt.Errorf("%s is %v, smaller than the window %v", s, img.Bounds(), win.Bounds())
		}
		colours := map[uint32]bool{}
		for y := 0; y < img.Bounds().Dy(); y += 7 {
			for x := 0; x < img.Bounds().Dx(); x += 7 {
				r, g, b, _ := img.At(x, y).RGBA()
				colours[r>>8<<16|g>>8<<8|b>>8] = true
			}
		}
		if len(colours) < 16 {
			return fmt.Errorf("%s looks blank (%d colours)", s, len(colours))
		}
		fmt.Printf("screenshot %s: %v, %d colours sampled\n", s, img.Bounds(), len(colours))
	}
	fmt.Println("smokecheck: OK")
	return nil
}

// shadeOf reports whether (r, g, b) is the palette colour (pr, pg, pb) scaled by a factor in
// [0.55, 1.05], within 12 levels per channel.
func shadeOf(r, g, b, pr, pg, pb uint8) bool {
	pmax := max(pr, pg, pb)
	if pmax == 0 {
		return false
	}
	k := float64(max(r, g, b)) / float64(pmax)
	if k < 0.55 || k > 1.05 {
		return false
	}
	near := func(c, p uint8) bool {
		d := float64(c) - k*float64(p)
		return d > -12 && d < 12
	}
	return near(r, pr) && near(g, pg) && near(b, pb)
}

// countOverlaid counts the pixels of img inside area that show colour c drawn at opacity a
// over a grey background, as the slice viewer blends its overlay: (1 − a)·grey + a·c with
// grey from 0 to 200, within tol levels per channel.
func countOverlaid(img image.Image, area image.Rectangle, c color.NRGBA, a float64, tol float64) int {
	if a <= 0 || a >= 1 {
		a = min(max(a, 0.05), 0.95) // a fully opaque or transparent overlay has no grey to find
	}
	n := 0
	for y := area.Min.Y; y < area.Max.Y; y++ {
		for x := area.Min.X; x < area.Max.X; x++ {
			r, g, b, _ := img.At(x, y).RGBA()
			px := [3]float64{float64(r >> 8), float64(g >> 8), float64(b >> 8)}
			want := [3]float64{float64(c.R), float64(c.G), float64(c.B)}
			grey := (px[0] - a*want[0]) / (1 - a)
			if grey < -tol || grey > 200+tol {
				continue
			}
			ok := true
			for ch := 1; ch < 3 && ok; ch++ {
				d := px[ch] - ((1-a)*grey + a*want[ch])
				ok = d > -tol && d < tol
			}
			if ok {
				n++
			}
		}
	}
	return n
}
