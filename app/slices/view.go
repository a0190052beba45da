package slices

import (
	"fmt"
	"image"
	"image/color"

	"fyne.io/fyne/v2"
	"fyne.io/fyne/v2/canvas"
	"fyne.io/fyne/v2/driver/desktop"
	"fyne.io/fyne/v2/theme"
	"fyne.io/fyne/v2/widget"
)

// CrosshairColor is the colour of the crosshair in every view and in saved images.
var CrosshairColor = color.NRGBA{0x00, 0xe0, 0x40, 0xd0}

// sliceView shows one plane of the viewer: the slice image (one pixel per voxel, scaled to the
// voxels' physical size), the crosshair, and the orientation letters at its edges. Taps select a
// voxel, drags move the crosshair, scrolling steps through slices.
type sliceView struct {
	widget.BaseWidget
	v     *Viewer
	plane Plane

	back                     *canvas.Rectangle
	img                      *canvas.Image
	hLine, vLine             *canvas.Line
	left, right, top, bottom *canvas.Text
	title                    *canvas.Text
	// area is where the image was last laid out, in the widget's coordinates.
	area imageArea
}

// imageArea is a rectangle in a widget's coordinates.
type imageArea struct {
	Position fyne.Position
	Size     fyne.Size
}

func newSliceView(v *Viewer, p Plane) *sliceView {
	s := &sliceView{v: v, plane: p}
	s.ExtendBaseWidget(s)
	return s
}

func (s *sliceView) CreateRenderer() fyne.WidgetRenderer {
	s.back = canvas.NewRectangle(color.Black)
	s.img = canvas.NewImageFromImage(image.NewRGBA(image.Rect(0, 0, 1, 1)))
	s.img.FillMode = canvas.ImageFillStretch // the layout keeps the physical aspect
	s.img.ScaleMode = canvas.ImageScalePixels
	s.hLine, s.vLine = canvas.NewLine(CrosshairColor), canvas.NewLine(CrosshairColor)
	mk := func(bold bool) *canvas.Text {
		t := canvas.NewText("", color.NRGBA{0xf0, 0xf0, 0xf0, 0xff})
		t.TextSize = theme.TextSize()
		t.TextStyle.Bold = bold
		return t
	}
	s.left, s.right, s.top, s.bottom = mk(true), mk(true), mk(true), mk(true)
	s.title = mk(false)
	s.title.TextSize = theme.CaptionTextSize()
	r := &sliceRenderer{s: s, objects: []fyne.CanvasObject{s.back, s.img, s.hLine, s.vLine, s.left, s.right, s.top, s.bottom, s.title}}
	r.Refresh()
	return r
}

// imageArea fits the slice's physical extent (pixels × mm per pixel) into size, centred.
func (s *sliceView) fit(size fyne.Size) imageArea {
	g, ok := s.v.geometry(s.plane)
	if !ok {
		return imageArea{Size: size}
	}
	w, h := float32(float64(g.nc)*g.dc), float32(float64(g.nr)*g.dr)
	k := min(size.Width/w, size.Height/h)
	iw, ih := w*k, h*k
	return imageArea{Position: fyne.NewPos((size.Width-iw)/2, (size.Height-ih)/2), Size: fyne.NewSize(iw, ih)}
}

// pixelAt returns the slice pixel under widget position p, and whether p lies on the image.
func (s *sliceView) pixelAt(p fyne.Position) (px, py int, ok bool) {
	g, ok := s.v.geometry(s.plane)
	a := s.area
	if !ok || a.Size.Width <= 0 || a.Size.Height <= 0 {
		return 0, 0, false
	}
	fx := (p.X - a.Position.X) / a.Size.Width * float32(g.nc)
	fy := (p.Y - a.Position.Y) / a.Size.Height * float32(g.nr)
	if fx < 0 || fy < 0 || fx >= float32(g.nc) || fy >= float32(g.nr) {
		return 0, 0, false
	}
	return int(fx), int(fy), true
}

// Tapped selects the voxel under the pointer.
func (s *sliceView) Tapped(e *fyne.PointEvent) {
	if px, py, ok := s.pixelAt(e.Position); ok {
		s.v.pick(s.plane, px, py, true)
	}
}

var _ desktop.Hoverable = (*sliceView)(nil)

// MouseIn, MouseMoved and MouseOut keep the viewer's pointer line on the voxel under the mouse
// pointer (off the image: none); they never move the crosshair.
func (s *sliceView) MouseIn(e *desktop.MouseEvent) { s.MouseMoved(e) }

func (s *sliceView) MouseMoved(e *desktop.MouseEvent) {
	if px, py, ok := s.pixelAt(e.Position); ok {
		s.v.hover(&hoverAt{s.plane, px, py})
	} else {
		s.v.hover(nil)
	}
}

func (s *sliceView) MouseOut() { s.v.hover(nil) }

// Dragged moves the crosshair with the pointer; DragEnd selects where it stopped.
func (s *sliceView) Dragged(e *fyne.DragEvent) {
	if px, py, ok := s.pixelAt(e.Position); ok {
		s.v.pick(s.plane, px, py, false)
	}
}

func (s *sliceView) DragEnd() { s.v.selectCursor() }

// Scrolled steps one slice per wheel notch (up = towards superior, anterior, right).
func (s *sliceView) Scrolled(e *fyne.ScrollEvent) {
	switch {
	case e.Scrolled.DY > 0:
		s.v.step(s.plane, 1)
	case e.Scrolled.DY < 0:
		s.v.step(s.plane, -1)
	}
}

func (s *sliceView) MinSize() fyne.Size { return fyne.NewSize(120, 120) }

type sliceRenderer struct {
	s       *sliceView
	objects []fyne.CanvasObject
}

func (r *sliceRenderer) Layout(size fyne.Size) {
	s := r.s
	s.back.Resize(size)
	s.area = s.fit(size)
	s.img.Move(s.area.Position)
	s.img.Resize(s.area.Size)
	r.placeCrosshair()
	pad := float32(2)
	place := func(t *canvas.Text, x, y float32) {
		ms := t.MinSize()
		t.Resize(ms)
		t.Move(fyne.NewPos(min(max(x, 0), size.Width-ms.Width), min(max(y, 0), size.Height-ms.Height)))
	}
	mid := s.area.Position.Y + s.area.Size.Height/2
	place(s.left, pad, mid-s.left.MinSize().Height/2)
	place(s.right, size.Width-s.right.MinSize().Width-pad, mid-s.right.MinSize().Height/2)
	cx := s.area.Position.X + s.area.Size.Width/2
	place(s.top, cx-s.top.MinSize().Width/2, pad)
	place(s.bottom, cx-s.bottom.MinSize().Width/2, size.Height-s.bottom.MinSize().Height-pad)
	place(s.title, pad, pad)
}

// placeCrosshair draws the crosshair through the centre of the cursor's voxel.
func (r *sliceRenderer) placeCrosshair() {
	s := r.s
	g, ok := s.v.geometry(s.plane)
	a := s.area
	s.hLine.Hidden, s.vLine.Hidden = !ok, !ok
	if !ok {
		return
	}
	px, py := g.pixel(s.v.cursor)
	x := a.Position.X + (float32(px)+0.5)/float32(g.nc)*a.Size.Width
	y := a.Position.Y + (float32(py)+0.5)/float32(g.nr)*a.Size.Height
	s.vLine.Position1, s.vLine.Position2 = fyne.NewPos(x, a.Position.Y), fyne.NewPos(x, a.Position.Y+a.Size.Height)
	s.hLine.Position1, s.hLine.Position2 = fyne.NewPos(a.Position.X, y), fyne.NewPos(a.Position.X+a.Size.Width, y)
	s.vLine.Refresh()
	s.hLine.Refresh()
}

func (r *sliceRenderer) Refresh() {
	s := r.s
	g, ok := s.v.geometry(s.plane)
	if ok {
		s.img.Image = s.v.sliceImage(s.plane)
		s.left.Text, s.right.Text, s.top.Text, s.bottom.Text = g.left, g.right, g.top, g.bottom
		axis := [3]string{"i", "j", "k"}[g.fixed]
		s.title.Text = fmt.Sprintf("%s %s = %d", s.plane, axis, s.v.cursor[g.fixed])
	} else {
		s.left.Text, s.right.Text, s.top.Text, s.bottom.Text = "", "", "", ""
		s.title.Text = s.plane.String()
	}
	for _, t := range []*canvas.Text{s.left, s.right, s.top, s.bottom, s.title} {
		t.Refresh()
	}
	s.img.Refresh()
	r.Layout(s.Size())
}

func (r *sliceRenderer) MinSize() fyne.Size           { return r.s.MinSize() }
func (r *sliceRenderer) Objects() []fyne.CanvasObject { return r.objects }
func (r *sliceRenderer) Destroy()                     {}
