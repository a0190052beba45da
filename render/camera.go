package render

import (
	"fmt"
	"math"
	"strings"

	"github.com/go-gl/mathgl/mgl32"
)

// Camera is an orbit camera around the scene's centre (the centre of the box holding the
// surface and the spheres), with a perspective projection.
//
// World space is RAS+ (MNI): +x right, +y anterior, +z superior. The eye sits in direction
// e = (cos El·cos Az, cos El·sin Az, sin El) from the centre, so Azimuth 0° looks at the brain
// from the right, 90° from the front, 180° from the left and −90° from behind; Elevation 90°
// looks down from above. The screen's right-hand direction is r = (−sin Az, cos Az, 0) and its
// up direction e × r, which stay defined at the poles, so the superior and inferior views need
// no special up vector.
type Camera struct {
	Azimuth   float32 // degrees
	Elevation float32 // degrees, −90…90
	// Zoom is the magnification: at 1 the scene's bounding sphere just fits the shorter side of
	// the image; larger values move the eye closer.
	Zoom float32
	// FieldOfView is the vertical opening angle in degrees; 0 means DefaultFieldOfView.
	FieldOfView float32
}

// DefaultFieldOfView is the vertical opening angle used when Camera.FieldOfView is 0: narrow
// enough that the brain shows little perspective distortion.
const DefaultFieldOfView = 30

// Zoom limits: far enough out to see the whole scene small, close enough to inspect a hub.
const (
	MinZoom = 0.25
	MaxZoom = 8
)

// StandardViews are the names StandardView accepts, in the order the view buttons show them.
var StandardViews = []string{"left", "right", "anterior", "posterior", "superior", "inferior"}

// StandardView returns the camera of one of the six anatomical views at zoom 1, in RAS+ world
// space: "left" looks at the left hemisphere from the left (anterior on the screen's left),
// "right" at the right hemisphere from the right (anterior on the right), "anterior" at the face
// (the subject's left on the screen's right), "posterior" at the back of the head (the subject's
// right on the right), "superior" from above with anterior up (right on the right, as in
// neurological convention) and "inferior" from below with anterior up (right on the left).
func StandardView(name string) (Camera, error) {
	c := Camera{Zoom: 1}
	switch strings.ToLower(name) {
	case "left":
		c.Azimuth = 180
	case "right":
		c.Azimuth = 0
	case "anterior":
		c.Azimuth = 90
	case "posterior":
		c.Azimuth = -90
	case "superior":
		c.Azimuth, c.Elevation = -90, 90
	case "inferior":
		c.Azimuth, c.Elevation = 90, -90
	default:
		return c, fmt.Errorf("render: unknown standard view %q (want one of %s)", name, strings.Join(StandardViews, ", "))
	}
	return c, nil
}

// Rotate turns the scene by dAzimuth and dElevation degrees as if it were grabbed and dragged:
// a positive dAzimuth turns the side facing the viewer to the right, a positive dElevation tilts
// it downwards (the eye goes up). Elevation stops at the poles.
func (c *Camera) Rotate(dAzimuth, dElevation float32) {
	az := math.Mod(float64(c.Azimuth-dAzimuth), 360)
	if az > 180 {
		az -= 360
	} else if az <= -180 {
		az += 360
	}
	c.Azimuth = float32(az)
	c.Elevation = min(max(c.Elevation+dElevation, -90), 90)
}

// ZoomBy multiplies the magnification by factor (> 1 moves closer), within MinZoom…MaxZoom.
// A factor that is not a positive finite number leaves the camera as it was.
func (c *Camera) ZoomBy(factor float32) {
	if !(factor > 0) || math.IsInf(float64(factor), 0) {
		return
	}
	z := c.Zoom
	if !(z > 0) {
		z = 1
	}
	c.Zoom = min(max(z*factor, MinZoom), MaxZoom)
}

// frame is a camera placed for one scene and image size.
type frame struct {
	view   mgl32.Mat4 // world → view space (eye at the origin looking down −z, y up)
	focal  float32    // pixels per unit of x/−z and y/−z
	cx, cy float32    // image centre in pixels
	near   float32    // view-space distance of the near plane
}

// place puts the camera at its distance from a scene whose bounding sphere is (centre, radius),
// for an image of w×h pixels.
func (c Camera) place(centre mgl32.Vec3, radius float32, w, h int) frame {
	fov := c.FieldOfView
	if !(fov > 0 && fov < 170) {
		fov = DefaultFieldOfView
	}
	zoom := c.Zoom
	if !(zoom > 0) {
		zoom = 1
	}
	if !(radius > 0) {
		radius = 1
	}
	halfY := float64(fov) * math.Pi / 360
	tanY := math.Tan(halfY)
	aspect := float64(w) / float64(max(h, 1))
	// The sphere fits the shorter side: half-angle α of that side, distance R / sin α.
	half := halfY
	if aspect < 1 {
		half = math.Atan(tanY * aspect)
	}
	dist := float32(float64(radius) / math.Sin(half) / float64(zoom))

	az := float64(c.Azimuth) * math.Pi / 180
	el := float64(min(max(c.Elevation, -90), 90)) * math.Pi / 180
	e := mgl32.Vec3{float32(math.Cos(el) * math.Cos(az)), float32(math.Cos(el) * math.Sin(az)), float32(math.Sin(el))}
	r := mgl32.Vec3{float32(-math.Sin(az)), float32(math.Cos(az)), 0}
	u := e.Cross(r)
	eye := centre.Add(e.Mul(dist))
	view := mgl32.LookAtV(eye, centre, u)
	return frame{
		view:  view,
		focal: float32(float64(h) / 2 / tanY),
		cx:    float32(w) / 2,
		cy:    float32(h) / 2,
		near:  max(dist-radius*1.01, radius*0.01),
	}
}

// toView maps a world point to view space.
func (f *frame) toView(p mgl32.Vec3) mgl32.Vec3 {
	m := &f.view
	return mgl32.Vec3{
		m[0]*p[0] + m[4]*p[1] + m[8]*p[2] + m[12],
		m[1]*p[0] + m[5]*p[1] + m[9]*p[2] + m[13],
		m[2]*p[0] + m[6]*p[1] + m[10]*p[2] + m[14],
	}
}

// rotate maps a world direction to view space.
func (f *frame) rotate(d mgl32.Vec3) mgl32.Vec3 {
	m := &f.view
	return mgl32.Vec3{
		m[0]*d[0] + m[4]*d[1] + m[8]*d[2],
		m[1]*d[0] + m[5]*d[1] + m[9]*d[2],
		m[2]*d[0] + m[6]*d[1] + m[10]*d[2],
	}
}

// Project returns the pixel position (x right, y down; pixel (i, j) covers [i, i+1)×[j, j+1))
// of world point p in a w×h image of scene s seen by camera c, and whether p lies in front of
// the eye. The app uses it to place labels and tests use it to find a sphere on screen.
func (c Camera) Project(s *Scene, w, h int, p mgl32.Vec3) (x, y float32, ok bool) {
	centre, radius := s.bounds()
	f := c.place(centre, radius, w, h)
	v := f.toView(p)
	if v[2] >= 0 {
		return 0, 0, false
	}
	return f.cx + f.focal*v[0]/-v[2], f.cy - f.focal*v[1]/-v[2], true
}
