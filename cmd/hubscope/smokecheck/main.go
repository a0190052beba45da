// Command smokecheck checks what `hubscope --smoke-dump DIR` wrote in scripts/gui-smoke.sh:
// the 3D view inside the window screenshot shows hub spheres in their modules' colours, and
// the hub table lists atlas regions.
//
//	go run ./cmd/hubscope/smokecheck DIR [SCREENSHOT.png…]
//
// Extra screenshots (the X server's own, from ImageMagick's import) are checked for being the
// window's size or larger and not blank.
package main

import (
	"encoding/csv"
	"encoding/json"
	"fmt"
	"image"
	"image/png"
	"os"
	"path/filepath"
	"strconv"

	"github.com/hubscope/hubscope/render"
)

type layout struct {
	Scale  float32                  `json:"scale"`
	View3D struct{ X, Y, W, H int } `json:"view3d"`
}

func main() {
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
	var l layout
	b, err := os.ReadFile(filepath.Join(dir, "layout.json"))
	if err != nil {
		return err
	}
	if err := json.Unmarshal(b, &l); err != nil {
		return fmt.Errorf("layout.json: %w", err)
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
