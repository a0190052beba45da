// Package view3d is the Fyne widget that shows HubScope's 3D brain view: it wraps a
// render.Renderer, turns the brain when dragged, zooms on scroll, selects the hub under a tap,
// and has buttons for the six standard views, a glass-brain toggle and "Save PNG…".
//
//	v := view3d.New(scene)               // scene: surface + hub spheres (package render)
//	v.OnSelect = func(id int) { … }      // id: the tapped sphere's render.Sphere.ID
//	window.SetContent(v)
//	v.SetStandardView("superior")
//	err := v.SavePNG("figure.png")       // the current view, no dialog
//
// Frames are rendered off the UI goroutine and applied with fyne.Do. Requests that arrive
// while a frame is being drawn (a drag sends dozens per second) coalesce into one next frame
// showing the latest camera, so the view never falls behind the pointer. The package draws no
// networks itself and never imports fyne.io/fyne/v2/app, so it is tested headless with
// fyne.io/fyne/v2/test.
package view3d

import (
	"errors"
	"fmt"
	"image"
	"image/png"
	"math"
	"sync"

	"fyne.io/fyne/v2"
	"fyne.io/fyne/v2/canvas"
	"fyne.io/fyne/v2/container"
	"fyne.io/fyne/v2/dialog"
	"fyne.io/fyne/v2/storage"
	"fyne.io/fyne/v2/widget"

	"github.com/hubscope/hubscope/render"
)

// Interaction rates.
const (
	degreesPerUnit = 0.4   // drag: degrees of rotation per Fyne unit of pointer travel
	zoomPerUnit    = 0.005 // scroll: zoom factor e^(0.005·Δ); ≈ 14 % per wheel notch under X11
)

// View shows a render.Scene. Create it with New; its methods are safe to call from any
// goroutine.
type View struct {
	widget.BaseWidget

	// OnSelect is called on the UI goroutine with the ID of the sphere under a tap.
	OnSelect func(id int)
	// OnError is called on the UI goroutine when "Save PNG…" fails; nil shows an error dialog.
	OnError func(error)

	vp      *viewport
	buttons map[string]*widget.Button
	glassCh *widget.Check
	save    *widget.Button

	mu        sync.Mutex // guards the fields below
	scene     *render.Scene
	cam       render.Camera
	glass     bool
	highlight int     // ID of the highlighted sphere, −1 for none
	dirty     bool    // a frame was requested since the last one started
	rendering bool    // a render goroutine is running
	pxW, pxH  int     // viewport size in device pixels, set by its Layout on the UI goroutine
	pxScale   float32 // device pixels per Fyne unit at that Layout

	// runOnUI runs a function on the UI goroutine and waits for it: fyne.DoAndWait, or in
	// tests a queue that the test goroutine (their UI goroutine) drains.
	runOnUI func(func())

	renderMu sync.Mutex // guards r: rendering, Pick and SavePNG use it in turn
	r        *render.Renderer
}

// New returns a view of scene from the left, with the scene's own Glass setting.
func New(scene *render.Scene) *View {
	cam, _ := render.StandardView("left")
	v := &View{scene: scene, cam: cam, r: render.NewRenderer(0, 0), buttons: map[string]*widget.Button{}, runOnUI: fyne.DoAndWait, pxScale: 1, highlight: -1}
	if scene != nil {
		v.glass = scene.Glass
	}
	v.vp = newViewport(v)
	for _, name := range render.StandardViews {
		v.buttons[name] = widget.NewButton(viewLabel(name), func() {
			if err := v.SetStandardView(name); err != nil {
				v.reportError(err)
			}
		})
	}
	v.glassCh = widget.NewCheck("Glass brain", v.SetGlass)
	v.glassCh.Checked = v.glass
	v.save = widget.NewButton("Save PNG…", v.saveDialog)
	v.ExtendBaseWidget(v)
	return v
}

func viewLabel(name string) string {
	if name == "" {
		return name
	}
	return string(name[0]-'a'+'A') + name[1:]
}

// CreateRenderer lays the view out: the tool bar above the image.
func (v *View) CreateRenderer() fyne.WidgetRenderer {
	bar := container.NewHBox()
	for _, name := range render.StandardViews {
		bar.Add(v.buttons[name])
	}
	bar.Add(widget.NewSeparator())
	bar.Add(v.glassCh)
	bar.Add(v.save)
	return widget.NewSimpleRenderer(container.NewBorder(container.NewHScroll(bar), nil, nil, nil, v.vp))
}

// SetScene replaces the scene (e.g. when a new analysis is opened) and redraws.
func (v *View) SetScene(s *render.Scene) {
	v.mu.Lock()
	v.scene = s
	v.mu.Unlock()
	v.requestFrame()
}

// Scene returns the scene shown.
func (v *View) Scene() *render.Scene {
	v.mu.Lock()
	defer v.mu.Unlock()
	return v.scene
}

// Camera returns the current camera.
func (v *View) Camera() render.Camera {
	v.mu.Lock()
	defer v.mu.Unlock()
	return v.cam
}

// SetCamera sets the camera and redraws.
func (v *View) SetCamera(c render.Camera) {
	v.mu.Lock()
	v.cam = c
	v.mu.Unlock()
	v.requestFrame()
}

// SetStandardView turns to one of render.StandardViews, keeping the zoom.
func (v *View) SetStandardView(name string) error {
	c, err := render.StandardView(name)
	if err != nil {
		return err
	}
	v.mu.Lock()
	c.Zoom, c.FieldOfView = v.cam.Zoom, v.cam.FieldOfView
	v.cam = c
	v.mu.Unlock()
	v.requestFrame()
	return nil
}

// Glass reports whether the surface is drawn as a glass brain.
func (v *View) Glass() bool {
	v.mu.Lock()
	defer v.mu.Unlock()
	return v.glass
}

// SetGlass switches between the opaque and the glass brain.
func (v *View) SetGlass(on bool) {
	v.mu.Lock()
	changed := v.glass != on
	v.glass = on
	v.mu.Unlock()
	if changed {
		fyne.Do(func() {
			if v.glassCh.Checked != on {
				v.glassCh.SetChecked(on)
			}
		})
		v.requestFrame()
	}
}

// rotate and zoom are the pointer gestures.
func (v *View) rotate(dx, dy float32) {
	v.mu.Lock()
	v.cam.Rotate(dx*degreesPerUnit, dy*degreesPerUnit)
	v.mu.Unlock()
	v.requestFrame()
}

func (v *View) zoom(delta float32) {
	v.mu.Lock()
	v.cam.ZoomBy(float32(math.Exp(float64(delta) * zoomPerUnit)))
	v.mu.Unlock()
	v.requestFrame()
}

// pick returns the sphere under viewport position p (Fyne units) in the frame on screen.
func (v *View) pick(p fyne.Position) (int, bool) {
	v.mu.Lock()
	s := v.pxScale
	v.mu.Unlock()
	v.renderMu.Lock()
	defer v.renderMu.Unlock()
	return v.r.Pick(int(p.X*s), int(p.Y*s))
}

// Highlight marks the sphere with this ID (the hub selected elsewhere, e.g. in the slices)
// by drawing it larger and lighter; −1, or an ID no sphere has, marks none. The scene itself
// is not changed.
func (v *View) Highlight(id int) {
	v.mu.Lock()
	changed := v.highlight != id
	v.highlight = id
	v.mu.Unlock()
	if changed {
		v.requestFrame()
	}
}

// Highlighted returns the ID passed to the last Highlight (−1 for none).
func (v *View) Highlighted() int {
	v.mu.Lock()
	defer v.mu.Unlock()
	return v.highlight
}

// Highlighted spheres grow by highlightScale and move this far towards white, so they stand out
// among hubs of the same module while keeping its hue.
const (
	highlightScale   = 1.6
	highlightLighten = 0.45
)

// state returns what the next frame shows: the scene with the view's glass setting and the
// highlighted sphere, and the camera.
func (v *View) state() (*render.Scene, render.Camera) {
	v.mu.Lock()
	defer v.mu.Unlock()
	var s render.Scene
	if v.scene != nil {
		s = *v.scene
	}
	s.Glass = v.glass
	if v.highlight >= 0 {
		for n, sp := range s.Spheres {
			if sp.ID != v.highlight {
				continue
			}
			// A copy: the caller's scene stays as it was given.
			s.Spheres = append([]render.Sphere(nil), s.Spheres...)
			sp.Radius *= highlightScale
			lift := func(c uint8) uint8 { return c + uint8(math.Round(float64(255-c)*highlightLighten)) }
			sp.Color.R, sp.Color.G, sp.Color.B = lift(sp.Color.R), lift(sp.Color.G), lift(sp.Color.B)
			s.Spheres[n] = sp
			break
		}
	}
	return &s, v.cam
}

// requestFrame asks for a frame showing the current state. If one is being drawn, the request
// is folded into a single next frame.
func (v *View) requestFrame() {
	v.mu.Lock()
	v.dirty = true
	if v.rendering {
		v.mu.Unlock()
		return
	}
	v.rendering = true
	v.mu.Unlock()
	go v.renderLoop()
}

func (v *View) renderLoop() {
	for {
		v.mu.Lock()
		if !v.dirty {
			v.rendering = false
			v.mu.Unlock()
			return
		}
		v.dirty = false
		v.mu.Unlock()

		w, h := v.pixelSize()
		if w <= 0 || h <= 0 {
			continue // not laid out yet: the first Layout asks again
		}
		s, c := v.state()
		img := v.renderFrame(s, c, w, h)
		// Waiting for the frame to be applied keeps at most one frame in flight.
		v.runOnUI(func() {
			v.vp.imgMu.Lock()
			defer v.vp.imgMu.Unlock()
			v.vp.img.Image = img
			v.vp.img.Refresh()
		})
	}
}

// renderFrame draws one frame into a new image (the renderer reuses its own, which the
// canvas must not see change under it).
func (v *View) renderFrame(s *render.Scene, c render.Camera, w, h int) *image.RGBA {
	v.renderMu.Lock()
	defer v.renderMu.Unlock()
	v.r.Resize(w, h)
	frame := v.r.Render(s, c)
	out := image.NewRGBA(frame.Rect)
	copy(out.Pix, frame.Pix)
	return out
}

// Image renders the current view at the viewport's pixel size (800×600 before the view is
// laid out) and returns it.
func (v *View) Image() *image.RGBA {
	w, h := v.pixelSize()
	if w <= 0 || h <= 0 {
		w, h = 800, 600
	}
	s, c := v.state()
	return v.renderFrame(s, c, w, h)
}

// SavePNG writes the current view to path as PNG (see Image for the size).
func (v *View) SavePNG(path string) error {
	return render.SavePNG(path, v.Image())
}

// saveDialog is the "Save PNG…" button: a file-save dialog in the view's window.
func (v *View) saveDialog() {
	win := v.window()
	if win == nil {
		v.reportError(errors.New("save PNG: the 3D view is not shown in a window"))
		return
	}
	d := dialog.NewFileSave(func(wc fyne.URIWriteCloser, err error) {
		if err != nil {
			v.reportError(fmt.Errorf("save PNG: %w", err))
			return
		}
		if wc == nil {
			return // cancelled
		}
		img := v.Image()
		err = png.Encode(wc, img)
		if cerr := wc.Close(); err == nil {
			err = cerr
		}
		if err != nil {
			v.reportError(fmt.Errorf("save %s: %w", wc.URI().Path(), err))
		}
	}, win)
	d.SetFilter(storage.NewExtensionFileFilter([]string{".png"}))
	d.SetFileName("hubscope-3d.png")
	d.Show()
}

// window finds the window showing the view, for dialogs.
func (v *View) window() fyne.Window {
	a := fyne.CurrentApp()
	if a == nil {
		return nil
	}
	c := a.Driver().CanvasForObject(v)
	if c == nil {
		return nil
	}
	for _, w := range a.Driver().AllWindows() {
		if w.Canvas() == c {
			return w
		}
	}
	return nil
}

func (v *View) reportError(err error) {
	if v.OnError != nil {
		v.OnError(err)
		return
	}
	if w := v.window(); w != nil {
		dialog.ShowError(err, w)
		return
	}
	fyne.LogError("3D view", err)
}

// viewport is the image area: it receives the pointer gestures.
type viewport struct {
	widget.BaseWidget
	v   *View
	img *canvas.Image
	// imgMu orders the frame's hand-over with the layout's resize of img. A real driver runs
	// both on its UI goroutine, so the lock is never contended there; Fyne's test driver runs
	// fyne.DoAndWait on the caller's goroutine, where a frame applied by the render goroutine
	// could otherwise meet a layout from a test's tab switch (a data race under -race).
	imgMu sync.Mutex
}

var (
	_ fyne.Draggable  = (*viewport)(nil)
	_ fyne.Scrollable = (*viewport)(nil)
	_ fyne.Tappable   = (*viewport)(nil)
)

func newViewport(v *View) *viewport {
	p := &viewport{v: v, img: canvas.NewImageFromImage(nil)}
	p.img.FillMode = canvas.ImageFillStretch // frames are drawn at the viewport's pixel size
	p.img.ScaleMode = canvas.ImageScaleFastest
	p.ExtendBaseWidget(p)
	return p
}

func (p *viewport) CreateRenderer() fyne.WidgetRenderer {
	return &viewportRenderer{p: p}
}

// MinSize keeps the view usable when the app packs it into a tight layout.
func (p *viewport) MinSize() fyne.Size { return fyne.NewSize(160, 120) }

// Dragged turns the brain with the pointer.
func (p *viewport) Dragged(e *fyne.DragEvent) { p.v.rotate(e.Dragged.DX, e.Dragged.DY) }

// DragEnd ends a drag; every movement was applied as it came.
func (p *viewport) DragEnd() {}

// Scrolled zooms: scrolling up (wheel away from the user) moves closer.
func (p *viewport) Scrolled(e *fyne.ScrollEvent) { p.v.zoom(e.Scrolled.DY) }

// Tapped selects the hub under the pointer.
func (p *viewport) Tapped(e *fyne.PointEvent) {
	if id, ok := p.v.pick(e.Position); ok && p.v.OnSelect != nil {
		p.v.OnSelect(id)
	}
}

// scale is the canvas's pixels per Fyne unit (1 before the viewport is on a canvas).
func (p *viewport) scale() float32 {
	if a := fyne.CurrentApp(); a != nil {
		if c := a.Driver().CanvasForObject(p); c != nil && c.Scale() > 0 {
			return c.Scale()
		}
	}
	return 1
}

// pixelSize is the viewport's size in device pixels at its last layout.
func (v *View) pixelSize() (int, int) {
	v.mu.Lock()
	defer v.mu.Unlock()
	return v.pxW, v.pxH
}

type viewportRenderer struct {
	p *viewport
}

// Layout runs on the UI goroutine: it records the size in device pixels for the render
// goroutine and asks for a frame of the new size.
func (r *viewportRenderer) Layout(size fyne.Size) {
	r.p.imgMu.Lock()
	r.p.img.Resize(size)
	r.p.imgMu.Unlock()
	s := r.p.scale()
	w, h := int(size.Width*s+0.5), int(size.Height*s+0.5)
	v := r.p.v
	v.mu.Lock()
	changed := w != v.pxW || h != v.pxH || s != v.pxScale
	v.pxW, v.pxH, v.pxScale = w, h, s
	v.mu.Unlock()
	if changed {
		v.requestFrame()
	}
}

func (r *viewportRenderer) MinSize() fyne.Size           { return r.p.MinSize() }
func (r *viewportRenderer) Refresh()                     { canvas.Refresh(r.p.img) }
func (r *viewportRenderer) Objects() []fyne.CanvasObject { return []fyne.CanvasObject{r.p.img} }
func (r *viewportRenderer) Destroy()                     {}
