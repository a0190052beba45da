//go:build !js

package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"image/png"
	"os"
	"path/filepath"
	"time"

	"fyne.io/fyne/v2"

	"github.com/hubscope/hubscope/app"
)

// smokeDump writes what scripts/gui-smoke.sh checks once the first result is on screen:
// window.png (the window as Fyne drew it), layout.json (where the 3D view lies in it, in
// pixels), hubs.tsv (the hub table as displayed), view3d.png and report.html, then done.
type smokeDump struct {
	dir  string
	win  fyne.Window
	done bool
}

// Layout is layout.json.
type Layout struct {
	Scale  float32 `json:"scale"` // pixels per Fyne unit
	View3D struct {
		X, Y, W, H int
	} `json:"view3d"`
}

func (d *smokeDump) result(r *app.Result) {
	if d.done {
		return
	}
	d.done = true
	go func() {
		<-r.Ready3D
		<-r.Network.Loaded()
		// Let the 3D view draw its first frame at the window's size (frames render off the UI
		// goroutine, coalesced; a second is ample on two cores).
		time.Sleep(2 * time.Second)
		fyne.Do(func() {
			if err := d.write(r); err != nil {
				fmt.Fprintln(os.Stderr, "hubscope: --smoke-dump:", err)
				os.Exit(1)
			}
		})
	}()
}

func (d *smokeDump) write(r *app.Result) error {
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
	var l Layout
	if v := r.View3D; v != nil {
		sz := d.win.Canvas().Size()
		l.Scale = float32(img.Bounds().Dx()) / sz.Width
		pos := fyne.CurrentApp().Driver().AbsolutePositionForObject(v)
		vs := v.Size()
		l.View3D.X, l.View3D.Y = int(pos.X*l.Scale), int(pos.Y*l.Scale)
		l.View3D.W, l.View3D.H = int(vs.Width*l.Scale), int(vs.Height*l.Scale)
		if err := v.SavePNG(filepath.Join(d.dir, "view3d.png")); err != nil {
			return err
		}
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
	return os.WriteFile(filepath.Join(d.dir, "done"), []byte("ok\n"), 0o644)
}
