//go:build !js

// Package dump is the desktop app's --smoke-dump (scripts/gui-smoke.sh): a test driver built
// into the app behind that flag, which writes what the smoke test checks from inside the
// running app. Package smoke has the files' format.
package dump

import (
	"bytes"
	"encoding/json"
	"fmt"
	"image/png"
	"math"
	"os"
	"path/filepath"
	"strings"
	"time"

	"fyne.io/fyne/v2"

	"github.com/hubscope/hubscope/app"
	"github.com/hubscope/hubscope/app/compareview"
	"github.com/hubscope/hubscope/internal/smoke"
)

// A Dump writes, once the first result is on screen: window.png (the window as Fyne drew
// it), layout.json (where the 3D view lies in it, in pixels), hubs.tsv (the hub table as
// displayed), view3d.png, slices.png (the slice viewer's three views) with slices.json (what
// they should show), report.html and report.pdf, then done.
//
// Then, when the script creates show-slices in the folder (after its screenshot of the 3D
// tab), the Slices tab is shown with the strongest hub in the inspector, and
// slices-layout.json (where the slice viewer lies in the window) and slices-done are written.
type Dump struct {
	dir  string
	win  fyne.Window
	done bool
	ui   *app.UI
	// tmaps is set once a comparison's t-maps were written (Comparison).
	tmaps bool
}

// place returns o's place in the window's pixels.
func (d *Dump) place(o fyne.CanvasObject, scale float32) smoke.Rect {
	pos := fyne.CurrentApp().Driver().AbsolutePositionForObject(o)
	sz := o.Size()
	return smoke.Rect{X: int(pos.X * scale), Y: int(pos.Y * scale), W: int(sz.Width * scale), H: int(sz.Height * scale)}
}

// New returns the dump that writes into dir once the first result is shown.
func New(dir string) *Dump { return &Dump{dir: dir} }

// SetWindow names the window whose screenshot and layout are written.
func (d *Dump) SetWindow(w fyne.Window) { d.win = w }

// SetUI names the app whose cohort view Comparison shows.
func (d *Dump) SetUI(u *app.UI) { d.ui = u }

// Comparison is the app's OnComparison hook (hubscope --open-results with a comparison): on
// the first t-maps shown it selects the cohort view's T-maps tab and writes t-maps.json (the
// view's place, its significant nodes — voxel and t — and the |t| cut), t-maps-slices.png (the
// slice viewer's three views, as Snapshot draws them) with t-maps-slices.json (the crosshair
// and overlay), and t-maps-done.
func (d *Dump) Comparison(v *compareview.View, err error) {
	if d.tmaps {
		return
	}
	d.tmaps = true
	if err != nil {
		fmt.Fprintln(os.Stderr, "hubscope: --smoke-dump: the t-maps:", err)
		os.Exit(1)
	}
	if d.ui != nil {
		d.ui.SelectCohortTab(app.TabTMaps)
	}
	go func() {
		time.Sleep(2 * time.Second) // laid out and drawn
		fyne.Do(func() {
			if err := d.writeTMaps(v); err != nil {
				fmt.Fprintln(os.Stderr, "hubscope: --smoke-dump:", err)
				os.Exit(1)
			}
		})
	}()
}

func (d *Dump) writeTMaps(v *compareview.View) error {
	base := strings.ToLower(app.TabTMaps)
	if err := os.MkdirAll(d.dir, 0o755); err != nil {
		return err
	}
	info := smoke.TabInfo{Tab: app.TabTMaps, Place: d.place(v, d.scale()), Cut: v.Cut}
	for _, r := range v.Rows {
		info.Rows = append(info.Rows, smoke.NormRow{Kind: "significant", Voxel: r.Voxel, Z: r.T})
	}
	img, err := v.Viewer.Snapshot()
	if err != nil {
		return err
	}
	var b bytes.Buffer
	if err := png.Encode(&b, img); err != nil {
		return err
	}
	if err := os.WriteFile(filepath.Join(d.dir, base+"-slices.png"), b.Bytes(), 0o644); err != nil {
		return err
	}
	_, overlay := v.Viewer.Overlay()
	si, _ := json.MarshalIndent(smoke.SlicesInfo{Crosshair: v.Viewer.Crosshair(), Overlay: overlay, Opacity: v.Viewer.Style().Opacity}, "", "  ")
	if err := os.WriteFile(filepath.Join(d.dir, base+"-slices.json"), si, 0o644); err != nil {
		return err
	}
	js, _ := json.MarshalIndent(info, "", "  ")
	if err := os.WriteFile(filepath.Join(d.dir, base+".json"), js, 0o644); err != nil {
		return err
	}
	return os.WriteFile(filepath.Join(d.dir, base+"-done"), []byte("ok\n"), 0o644)
}

// Result is the app's onResult hook: on the first result it writes the dump.
func (d *Dump) Result(r *app.Result) {
	if d.done {
		return
	}
	d.done = true
	go func() {
		<-r.Ready3D
		<-r.Network.Loaded()
		<-r.SlicesReady
		// Let the 3D view draw its first frame at the window's size (frames render off the UI
		// goroutine, coalesced; a second is ample on two cores).
		time.Sleep(2 * time.Second)
		fyne.Do(func() {
			if err := d.write(r); err != nil {
				fmt.Fprintln(os.Stderr, "hubscope: --smoke-dump:", err)
				os.Exit(1)
			}
		})
		// The script's screenshot of the 3D tab is taken now; it asks for the Slices tab next.
		for range 600 {
			if _, err := os.Stat(filepath.Join(d.dir, "show-slices")); err == nil {
				break
			}
			time.Sleep(200 * time.Millisecond)
		}
		fyne.Do(func() {
			r.SelectTab(app.TabSlices)
			r.SelectHub(app.StrongestHub(r.Summary))
		})
		time.Sleep(2 * time.Second) // the inspector's series and the new layout
		fyne.Do(func() {
			if err := d.writeSlicesLayout(r); err != nil {
				fmt.Fprintln(os.Stderr, "hubscope: --smoke-dump:", err)
				os.Exit(1)
			}
		})
		d.showTabs(r)
	}()
}

// resultTabs are the tabs the script may ask for after the Slices tab, in order, with what
// tells that they have loaded.
func resultTabs(r *app.Result) []struct {
	name   string
	loaded <-chan struct{}
} {
	var out []struct {
		name   string
		loaded <-chan struct{}
	}
	add := func(name string, loaded <-chan struct{}) {
		out = append(out, struct {
			name   string
			loaded <-chan struct{}
		}{name, loaded})
	}
	if r.Quality != nil {
		add(app.TabQuality, r.Quality.Loaded())
	}
	if r.Norm != nil {
		add(app.TabNorm, r.Norm.Loaded())
	}
	if r.Sweep != nil {
		add(app.TabSweep, r.Sweep.Loaded())
	}
	return out
}

// showTabs shows, in order, each of the result's Quality, Norm and Sweep tabs that the script
// asks for (the file show-<tab>, in lower case; a tab is skipped once a later one is asked
// for), and writes <tab>.json and <tab>-done once it is on screen.
func (d *Dump) showTabs(r *app.Result) {
	tabs := resultTabs(r)
	asked := func(name string) bool {
		_, err := os.Stat(filepath.Join(d.dir, "show-"+strings.ToLower(name)))
		return err == nil
	}
	for i, t := range tabs {
		wanted := false
		for range 1200 {
			if wanted = asked(t.name); wanted {
				break
			}
			later := false
			for _, u := range tabs[i+1:] {
				later = later || asked(u.name)
			}
			if later {
				break
			}
			time.Sleep(200 * time.Millisecond)
		}
		if !wanted {
			continue
		}
		<-t.loaded
		fyne.Do(func() { r.SelectTab(t.name) })
		time.Sleep(2 * time.Second) // laid out and drawn
		fyne.Do(func() {
			if err := d.writeTab(r, t.name); err != nil {
				fmt.Fprintln(os.Stderr, "hubscope: --smoke-dump:", err)
				os.Exit(1)
			}
		})
	}
}

// writeTab writes <tab>.json and <tab>-done.
func (d *Dump) writeTab(r *app.Result, name string) error {
	info := smoke.TabInfo{Tab: name}
	var o fyne.CanvasObject
	switch name {
	case app.TabQuality:
		o = r.Quality
		info.FDShown = r.Quality.FD.Image != nil
		_, y := r.Quality.DVARS.Data()
		info.DVARSPoints = len(y)
	case app.TabNorm:
		o = r.Norm
		for _, row := range r.Norm.Rows {
			z := row.Z
			if math.IsNaN(z) {
				z = 0 // JSON has no NaN; a row without a z is not the smoke test's concern
			}
			info.Rows = append(info.Rows, smoke.NormRow{Kind: row.Kind, Voxel: row.Voxel, Z: z})
		}
	case app.TabSweep:
		o = r.Sweep
		info.Curves = map[string]int{}
		for k, p := range r.Sweep.Plots {
			_, y := p.Data()
			info.Curves[k] = len(y)
		}
	}
	info.Place = d.place(o, d.scale())
	js, _ := json.MarshalIndent(info, "", "  ")
	base := strings.ToLower(name)
	if err := os.WriteFile(filepath.Join(d.dir, base+".json"), js, 0o644); err != nil {
		return err
	}
	return os.WriteFile(filepath.Join(d.dir, base+"-done"), []byte("ok\n"), 0o644)
}

func (d *Dump) scale() float32 {
	img := d.win.Canvas().Capture()
	return float32(img.Bounds().Dx()) / d.win.Canvas().Size().Width
}

func (d *Dump) writeSlicesLayout(r *app.Result) error {
	js, _ := json.MarshalIndent(smoke.SlicesLayout{Slices: d.place(r.Slices, d.scale())}, "", "  ")
	if err := os.WriteFile(filepath.Join(d.dir, "slices-layout.json"), js, 0o644); err != nil {
		return err
	}
	return os.WriteFile(filepath.Join(d.dir, "slices-done"), []byte("ok\n"), 0o644)
}

// writeSlices writes slices.png and slices.json.
func (d *Dump) writeSlices(r *app.Result) error {
	if err := r.SaveSlicesPNG(filepath.Join(d.dir, "slices.png")); err != nil {
		return err
	}
	_, name := r.Slices.Overlay()
	info := smoke.SlicesInfo{Crosshair: r.Slices.Crosshair(), Overlay: name, Opacity: r.Slices.Style().Opacity}
	for _, h := range r.Summary.Hubs {
		if h.Voxel == info.Crosshair {
			info.Module = h.Module
		}
	}
	js, _ := json.MarshalIndent(info, "", "  ")
	return os.WriteFile(filepath.Join(d.dir, "slices.json"), js, 0o644)
}

func (d *Dump) write(r *app.Result) error {
	if err := os.MkdirAll(d.dir, 0o755); err != nil {
		return err
	}
	img := d.win.Canvas().Capture()
	var b bytes.Buffer
	if err := png.Encode(&b, img); err != nil {
		return err
	}
	if err := os.WriteFile(filepath.Join(d.dir, "window.png"), b.Bytes(), 0o644); err != nil {
		return err
	}
	var l smoke.Layout
	if v := r.View3D; v != nil {
		l.Scale = float32(img.Bounds().Dx()) / d.win.Canvas().Size().Width
		l.View3D = d.place(v, l.Scale)
		l.Links = len(v.Scene().Edges)
		for _, f := range r.Summary.Files {
			l.LinkFiles = l.LinkFiles || f.Name == "hub_links.tsv" || f.Name == "network.edge"
		}
		if err := v.SavePNG(filepath.Join(d.dir, "view3d.png")); err != nil {
			return err
		}
	}
	if err := d.writeSlices(r); err != nil {
		return err
	}
	js, _ := json.MarshalIndent(l, "", "  ")
	if err := os.WriteFile(filepath.Join(d.dir, "layout.json"), js, 0o644); err != nil {
		return err
	}
	var tsv bytes.Buffer
	if err := r.Network.Hubs.Write(&tsv, '\t'); err != nil {
		return err
	}
	if err := os.WriteFile(filepath.Join(d.dir, "hubs.tsv"), tsv.Bytes(), 0o644); err != nil {
		return err
	}
	if err := r.SaveReport(filepath.Join(d.dir, "report.html")); err != nil {
		return err
	}
	var pdf bytes.Buffer
	if err := r.WritePDFReport(&pdf); err != nil {
		return err
	}
	if err := os.WriteFile(filepath.Join(d.dir, "report.pdf"), pdf.Bytes(), 0o644); err != nil {
		return err
	}
	if r.Summary.Group != nil {
		// A group-mean network (hubscope --open-results on group's bundle): the Network tab,
		// whose header names the subjects, is what the script's screenshot shows.
		r.SelectTab(app.TabNetwork)
		info := smoke.GroupInfo{Title: r.Title(), Place: d.place(r.Tabs, d.scale()), Lines: r.Network.GroupLines()}
		js, _ := json.MarshalIndent(info, "", "  ")
		if err := os.WriteFile(filepath.Join(d.dir, "group.json"), js, 0o644); err != nil {
			return err
		}
	}
	return os.WriteFile(filepath.Join(d.dir, "done"), []byte("ok\n"), 0o644)
}
