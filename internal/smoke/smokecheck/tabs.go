package main

import (
	"encoding/csv"
	"encoding/json"
	"fmt"
	"image"
	"image/color"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/hubscope/hubscope/app/slices/lineplot"
	"github.com/hubscope/hubscope/internal/smoke"
)

// checkTab checks a Quality, Norm, T-maps or Sweep tab that the dump showed (DIR/<tab>.json) and the
// window's screenshot taken then: the Quality tab shows the FD trace and the DVARS trace drawn
// in its line colour; the Norm tab lists, among its hubs lost, a voxel of the planted lesion
// (LESION.tsv: synth's truth/lesion.tsv, columns i, j, k) — at least 0.8 of the lesion's
// voxels; the T-maps tab (a cohort's comparison) lists significant nodes, at least half of
// them in the lesion, and draws the first one's t on screen in the diverging scale; the Sweep
// tab draws its curves with the chosen threshold marked.
func checkTab(dir, tab, shotPath string, extra []string) error {
	b, err := os.ReadFile(filepath.Join(dir, strings.ToLower(tab)+".json"))
	if err != nil {
		return err
	}
	var info smoke.TabInfo
	if err := json.Unmarshal(b, &info); err != nil {
		return fmt.Errorf("%s.json: %w", strings.ToLower(tab), err)
	}
	shot, err := readPNG(shotPath)
	if err != nil {
		return err
	}
	p := info.Place
	area := image.Rect(p.X, p.Y, p.X+p.W, p.Y+p.H).Intersect(shot.Bounds())
	if area.Dx() < 200 || area.Dy() < 100 {
		return fmt.Errorf("the %s tab occupies %v of the %v screenshot", tab, area, shot.Bounds())
	}
	line, cursor := count(shot, area, lineplot.LineColor), count(shot, area, lineplot.CursorColor)
	fmt.Printf("%s tab at %v: %d pixels of the plots' line colour, %d of their marker colour\n", tab, area, line, cursor)
	switch strings.ToLower(tab) {
	case "quality":
		if !info.FDShown || info.DVARSPoints < 10 {
			return fmt.Errorf("the Quality tab: FD trace shown %v, %d DVARS points", info.FDShown, info.DVARSPoints)
		}
		if line < 30 {
			return fmt.Errorf("the Quality tab: the DVARS traces are not on screen (%d pixels of their colour)", line)
		}
	case "norm":
		if len(extra) < 1 {
			return fmt.Errorf("the Norm tab: give the planted lesion's table")
		}
		lesion, err := readVoxels(extra[0])
		if err != nil {
			return err
		}
		lost, hit := 0, 0
		for _, r := range info.Rows {
			if r.Kind == "hub lost" {
				lost++
				if lesion[r.Voxel] {
					hit++
				}
			}
		}
		fmt.Printf("Norm tab: %d rows, %d hubs lost, %d of them in the planted lesion (%d voxels)\n", len(info.Rows), lost, hit, len(lesion))
		if recall := float64(hit) / float64(len(lesion)); recall < 0.8 {
			return fmt.Errorf("the Norm tab: %d of the %d lesion voxels are among the hubs lost (recall %.2f < 0.8)", hit, len(lesion), recall)
		}
	case "t-maps":
		if len(extra) < 1 {
			return fmt.Errorf("the T-maps tab: give the planted lesion's table")
		}
		lesion, err := readVoxels(extra[0])
		if err != nil {
			return err
		}
		hit := 0
		for _, r := range info.Rows {
			if lesion[r.Voxel] {
				hit++
			}
		}
		// On screen: the diverging scale (its colour bar at least). In the viewer's snapshot,
		// whose colour bar has as many warm as cold pixels, the first row's node at the
		// crosshair adds warm pixels for t > 0, cold ones for t < 0.
		hot, cold := diverging(shot, area)
		snap, err := readPNG(filepath.Join(dir, "t-maps-slices.png"))
		if err != nil {
			return err
		}
		sh, sc := diverging(snap, snap.Bounds())
		fmt.Printf("T-maps tab: %d significant nodes, %d of them in the planted lesion (%d voxels); |t| >= %.2f; %d warm and %d cold pixels on screen, %d and %d in the slices' snapshot\n",
			len(info.Rows), hit, len(lesion), info.Cut, hot, cold, sh, sc)
		if len(info.Rows) == 0 || 2*hit < len(info.Rows) {
			return fmt.Errorf("the T-maps tab: %d of its %d significant nodes lie in the planted lesion (want at least one, and half)", hit, len(info.Rows))
		}
		if hot < 50 || cold < 50 {
			return fmt.Errorf("the T-maps tab: no diverging colour scale on screen (%d warm, %d cold pixels)", hot, cold)
		}
		if first := info.Rows[0]; first.Z > 0 && sh <= sc || first.Z < 0 && sc <= sh {
			return fmt.Errorf("the T-maps tab: the first node's t %.2f is not drawn at the crosshair (%d warm, %d cold pixels in the snapshot)", first.Z, sh, sc)
		}
	case "sweep":
		if len(info.Curves) < 3 {
			return fmt.Errorf("the Sweep tab: %d curves %v", len(info.Curves), info.Curves)
		}
		// The app's default settings (full metrics, 15 random networks) measure Q and σ at
		// every threshold: the tab draws their curves.
		for _, k := range []string{"modularity", "sigma"} {
			if _, ok := info.Curves[k]; !ok {
				return fmt.Errorf("the Sweep tab has no %s curve (curves %v)", k, info.Curves)
			}
		}
		for k, n := range info.Curves {
			if n < 2 {
				return fmt.Errorf("the Sweep tab: curve %s has %d points", k, n)
			}
		}
		if line < 50 || cursor < 10 {
			return fmt.Errorf("the Sweep tab: the curves (%d pixels) or the chosen threshold (%d) are not on screen", line, cursor)
		}
	default:
		return fmt.Errorf("unknown tab %q", tab)
	}
	return nil
}

// diverging counts area's pixels of the diverging scale's warm half (red well above blue) and
// cold half (blue well above red); the anatomy behind is grey, the crosshair green.
func diverging(img image.Image, area image.Rectangle) (hot, cold int) {
	for y := area.Min.Y; y < area.Max.Y; y++ {
		for x := area.Min.X; x < area.Max.X; x++ {
			r, _, b, _ := img.At(x, y).RGBA()
			switch r, b := int(r>>8), int(b>>8); {
			case r > b+80:
				hot++
			case b > r+80:
				cold++
			}
		}
	}
	return hot, cold
}

// count counts area's pixels of colour c (within 8 per channel).
func count(img image.Image, area image.Rectangle, c color.NRGBA) int {
	n := 0
	for y := area.Min.Y; y < area.Max.Y; y++ {
		for x := area.Min.X; x < area.Max.X; x++ {
			r, g, b, _ := img.At(x, y).RGBA()
			if near(uint8(r>>8), c.R) && near(uint8(g>>8), c.G) && near(uint8(b>>8), c.B) {
				n++
			}
		}
	}
	return n
}

func near(a, b uint8) bool { return a >= b-min(b, 8) && int(a) <= int(b)+8 }

// readVoxels reads the i, j, k columns of a TSV table.
func readVoxels(path string) (map[[3]int]bool, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	r := csv.NewReader(f)
	r.Comma = '\t'
	rows, err := r.ReadAll()
	if err != nil || len(rows) < 2 {
		return nil, fmt.Errorf("%s: %v (%d rows)", path, err, len(rows))
	}
	col := map[string]int{}
	for i, h := range rows[0] {
		col[h] = i
	}
	out := map[[3]int]bool{}
	for _, row := range rows[1:] {
		var v [3]int
		for a, name := range []string{"i", "j", "k"} {
			c, ok := col[name]
			if !ok {
				return nil, fmt.Errorf("%s: no column %s", path, name)
			}
			if v[a], err = strconv.Atoi(row[c]); err != nil {
				return nil, fmt.Errorf("%s: %w", path, err)
			}
		}
		out[v] = true
	}
	return out, nil
}

// checkGroup checks the dump of a group-mean network's result (DIR/group.json): the title and
// the Network tab's group lines name the SUBJECTS averaged, the mean and the mask rule, and
// the tab is on the screenshot.
func checkGroup(dir, shotPath, subjects string) error {
	b, err := os.ReadFile(filepath.Join(dir, "group.json"))
	if err != nil {
		return err
	}
	var info smoke.GroupInfo
	if err := json.Unmarshal(b, &info); err != nil {
		return fmt.Errorf("group.json: %w", err)
	}
	shot, err := readPNG(shotPath)
	if err != nil {
		return err
	}
	p := info.Place
	area := image.Rect(p.X, p.Y, p.X+p.W, p.Y+p.H).Intersect(shot.Bounds())
	fmt.Printf("group result %q at %v: %q\n", info.Title, area, info.Lines)
	want := "Group-mean network of " + subjects + " subjects"
	if !strings.HasPrefix(info.Title, "Group mean of "+subjects+" subjects") || len(info.Lines) < 3 || !strings.HasPrefix(info.Lines[0], want) ||
		!strings.HasPrefix(info.Lines[1], "Mask rule: ") || !strings.HasPrefix(info.Lines[len(info.Lines)-1], "Subjects: ") {
		return fmt.Errorf("the group result: title %q, lines %q (want %q…, the mask rule and the subjects)", info.Title, info.Lines, want)
	}
	if area.Dx() < 200 || area.Dy() < 100 {
		return fmt.Errorf("the group result's tabs occupy %v of the %v screenshot", area, shot.Bounds())
	}
	return nil
}
