// Package slicestest provides what the tests of the slice viewer, the voxel inspector and the
// Dynamics tab (and of the windows that embed them) need: a small synthetic job on an MNI 2 mm
// grid whose every value is known (Phantom), and a scripted ipc.Service that serves it and
// records what was asked (Service).
package slicestest

import (
	"context"
	"fmt"
	"io"
	"math"
	"sync"

	"github.com/hubscope/hubscope/ipc"
	"github.com/hubscope/hubscope/ipc/schema"
)

// Grid of the phantom: 30 × 36 × 30 voxels of 2 mm with the MNI152 2 mm template's axes
// (i runs right → left, j posterior → anterior, k inferior → superior), placed so that voxel
// Origin lies at (0, 0, 0) mm.
var (
	Dims   = [3]int{30, 36, 30}
	Origin = [3]int{15, 18, 14}
	Affine = [4][4]float64{
		{-2, 0, 0, 2 * float64(Origin[0])},
		{0, 2, 0, -2 * float64(Origin[1])},
		{0, 0, 2, -2 * float64(Origin[2])},
		{0, 0, 0, 1},
	}
)

// JobID is the phantom job's ID.
const JobID = "job-phantom"

// Phantom's layout: the brain is the ellipsoid with semi-axes Radii (voxels) around Origin.
// Modules are the four quadrants (left/right × anterior/posterior); hubs are Hubs; the atlas
// labels the same quadrants with AtlasLabels. TR is 2 s, the series has SeriesLength points.
var (
	Radii       = [3]float64{12, 15, 11}
	Hubs        = [][3]int{{20, 25, 14}, {9, 10, 16}, {15, 18, 14}}
	AtlasLabels = map[int]string{
		2001: "Frontal_L", 2002: "Frontal_R", 5001: "Occipital_L", 5002: "Occipital_R",
	}
	TR           = 2.0
	SeriesLength = 40
	// DFC: windows of 20 volumes every 5 volumes.
	DFCWindows, DFCWindow, DFCStep = 5, 20, 5
)

// InMask reports whether voxel v lies in the phantom's brain.
func InMask(v [3]int) bool {
	s := 0.0
	for a := range 3 {
		d := float64(v[a]-Origin[a]) / Radii[a]
		s += d * d
	}
	return s <= 1
}

// Left reports whether voxel v lies in the left hemisphere (x < 0: i above the origin).
func Left(v [3]int) bool { return v[0] > Origin[0] }

// Anterior reports whether voxel v lies in front of the origin (y ≥ 0).
func Anterior(v [3]int) bool { return v[1] >= Origin[1] }

// Module is voxel v's module: 1 left anterior, 2 right anterior, 3 left posterior, 4 right
// posterior (0 outside the brain).
func Module(v [3]int) int {
	if !InMask(v) {
		return 0
	}
	m := 1
	if !Left(v) {
		m++
	}
	if !Anterior(v) {
		m += 2
	}
	return m
}

// Region is voxel v's atlas label (0 outside the brain).
func Region(v [3]int) int {
	if !InMask(v) {
		return 0
	}
	r := 2001
	if !Anterior(v) {
		r = 5001
	}
	if !Left(v) {
		r++
	}
	return r
}

// Degree is voxel v's degree: 10 + i + 2j + 3k inside the brain, NaN outside; hubs get 250.
func Degree(v [3]int) float64 {
	if !InMask(v) {
		return math.NaN()
	}
	for _, h := range Hubs {
		if h == v {
			return 250
		}
	}
	return float64(10 + v[0] + 2*v[1] + 3*v[2])
}

// Strength is Degree · 0.4 (a mean link weight of 0.4).
func Strength(v [3]int) float64 { return 0.4 * Degree(v) }

// HubZ is (Degree − 100) / 50.
func HubZ(v [3]int) float64 { return (Degree(v) - 100) / 50 }

// Mean is the mean EPI: 1000 inside the brain plus gradients along j and k and a darker left
// hemisphere (so that a flipped view shows in a picture), 100 outside.
func Mean(v [3]int) float64 {
	if !InMask(v) {
		return 100
	}
	m := 1000 + 20*float64(v[2]) + 10*float64(v[1])
	if Left(v) {
		m -= 150
	}
	return m
}

// Template is the MNI template on the phantom's grid (served when a summary lists
// "template"): 200 inside the brain, brighter (250) on its anterior half, 0 outside.
func Template(v [3]int) float64 {
	switch {
	case !InMask(v):
		return 0
	case Anterior(v):
		return 250
	}
	return 200
}

// SeriesOf is voxel v's time series: a sinusoid whose period depends on its module.
func SeriesOf(v [3]int) []float32 {
	out := make([]float32, SeriesLength)
	period := 4 + 2*float64(Module(v))
	for t := range out {
		out[t] = float32(100 + 10*math.Sin(2*math.Pi*float64(t)/period))
	}
	return out
}

// SeedCorrelation is the phantom's seed map: exp(−d²/50) with d the distance in voxels.
func SeedCorrelation(seed, v [3]int) float64 {
	if !InMask(v) {
		return math.NaN()
	}
	d := 0.0
	for a := range 3 {
		d += float64((v[a] - seed[a]) * (v[a] - seed[a]))
	}
	return math.Exp(-d / 50)
}

// SeedMillis is the compute time the scripted helper reports for a seed map.
const SeedMillis = 12.5

// DFCDegree is window w's degree map: Degree · (1 + w/10).
func DFCDegree(w int, v [3]int) float64 { return Degree(v) * (1 + float64(w)/10) }

// DFCMeasure is window w's value of a global measure: density 0.01 + 0.001 w, modularity
// 0.5 − 0.02 w.
func DFCMeasure(name string, w int) float64 {
	if name == "density" {
		return 0.01 + 0.001*float64(w)
	}
	return 0.5 - 0.02*float64(w)
}

// VolumeOf builds the named phantom volume (as the helper would serve it).
func VolumeOf(name string) (*ipc.Volume, error) {
	var f func([3]int) float64
	categorical := false
	switch name {
	case "mean":
		f = Mean
	case "template":
		f = Template
	case "mask":
		f = func(v [3]int) float64 { return b2f(InMask(v)) }
		categorical = true
	case "degree":
		f = Degree
	case "strength":
		f = Strength
	case "hub_z":
		f = HubZ
	case "modules":
		f = func(v [3]int) float64 { return nanIfOut(v, float64(Module(v))) }
		categorical = true
	case "hubs":
		f = func(v [3]int) float64 {
			for _, h := range Hubs {
				if h == v {
					return 1
				}
			}
			return nanIfOut(v, 0)
		}
		categorical = true
	case "atlas":
		f = func(v [3]int) float64 { return float64(Region(v)) }
		categorical = true
	default:
		var w int
		if _, err := fmt.Sscanf(name, "dfc_degree@%d", &w); err != nil || w < 0 || w >= DFCWindows {
			return nil, ipc.Errorf(ipc.CodeNotFound, "job %s has no volume %q", JobID, name)
		}
		f = func(v [3]int) float64 { return DFCDegree(w, v) }
	}
	return build(name, categorical, f), nil
}

func b2f(b bool) float64 {
	if b {
		return 1
	}
	return 0
}

func nanIfOut(v [3]int, x float64) float64 {
	if !InMask(v) {
		return math.NaN()
	}
	return x
}

func build(name string, categorical bool, f func([3]int) float64) *ipc.Volume {
	vol := &ipc.Volume{Header: ipc.VolumeHeader{Name: name, Dims: Dims, Affine: Affine, Categorical: categorical}}
	vol.Data = make([]float32, Dims[0]*Dims[1]*Dims[2])
	lo, hi := math.Inf(1), math.Inf(-1)
	for k := range Dims[2] {
		for j := range Dims[1] {
			for i := range Dims[0] {
				x := f([3]int{i, j, k})
				vol.Data[i+Dims[0]*(j+Dims[1]*k)] = float32(x)
				if !math.IsNaN(x) {
					lo, hi = math.Min(lo, x), math.Max(hi, x)
				}
			}
		}
	}
	vol.Header.Min, vol.Header.Max = float32(lo), float32(hi)
	return vol
}

// Summary is the phantom job's summary: its volumes, hubs (strongest first), atlas and DFC.
func Summary() ipc.Summary {
	s := ipc.Summary{
		Job:     ipc.Job{ID: JobID, Name: "phantom", State: ipc.JobDone},
		Volumes: []string{"degree", "strength", "hubs", "hub_z", "modules", "mean", "mask", "atlas"},
		Atlas:   &ipc.AtlasInfo{Name: "phantom quadrants", Labels: AtlasLabels},
		DFC:     &schema.DFCSummary{Window: DFCWindow, Step: DFCStep, TR: TR},
	}
	for _, h := range Hubs {
		s.Hubs = append(s.Hubs, ipc.Hub{Voxel: h, Degree: int(Degree(h)), Strength: Strength(h), HubZ: HubZ(h), Module: Module(h)})
	}
	for w := range DFCWindows {
		s.Volumes = append(s.Volumes, fmt.Sprintf("dfc_degree@%d", w))
		s.DFC.Windows = append(s.DFC.Windows, schema.DFCWindow{Index: w, Start: w * DFCStep, Edges: int64(1000 + w),
			Measures: map[string]float64{"density": DFCMeasure("density", w), "modularity": DFCMeasure("modularity", w)}})
	}
	return s
}

// Service is a scripted helper serving the phantom job. It records every Volume, SeedMap and
// Series request; a request for a volume named in Hold waits until that channel is closed (or
// the request's context ends), so that tests can hold a fetch in flight.
type Service struct {
	mu       sync.Mutex
	requests []string
	Hold     map[string]chan struct{}
	// Cancelled counts volume requests that ended because their context did.
	cancelled int
}

// NewService returns a scripted helper with nothing held.
func NewService() *Service { return &Service{Hold: map[string]chan struct{}{}} }

func (s *Service) record(r string) {
	s.mu.Lock()
	s.requests = append(s.requests, r)
	s.mu.Unlock()
}

// Requests returns the requests so far, e.g. "volume degree", "seed 20,25,14", "series 1,2,3".
func (s *Service) Requests() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]string(nil), s.requests...)
}

// Count returns how many recorded requests equal r.
func (s *Service) Count(r string) int {
	n := 0
	for _, q := range s.Requests() {
		if q == r {
			n++
		}
	}
	return n
}

// Cancelled returns how many volume requests ended because their context was cancelled.
func (s *Service) Cancelled() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.cancelled
}

// HoldVolume makes requests for name wait until the returned function is called.
func (s *Service) HoldVolume(name string) (release func()) {
	c := make(chan struct{})
	s.mu.Lock()
	s.Hold[name] = c
	s.mu.Unlock()
	var once sync.Once
	return func() { once.Do(func() { close(c) }) }
}

func (s *Service) checkJob(id string) error {
	if id != JobID {
		return ipc.Errorf(ipc.CodeNotFound, "no job %q", id)
	}
	return nil
}

func (s *Service) Volume(ctx context.Context, id, name string) (*ipc.Volume, error) {
	s.record("volume " + name)
	if err := s.checkJob(id); err != nil {
		return nil, err
	}
	s.mu.Lock()
	hold := s.Hold[name]
	s.mu.Unlock()
	if hold != nil {
		select {
		case <-hold:
		case <-ctx.Done():
			s.mu.Lock()
			s.cancelled++
			s.mu.Unlock()
			return nil, ctx.Err()
		}
	}
	return VolumeOf(name)
}

func (s *Service) SeedMap(ctx context.Context, id string, voxel [3]int) (*ipc.Volume, error) {
	s.record(fmt.Sprintf("seed %d,%d,%d", voxel[0], voxel[1], voxel[2]))
	if err := s.checkJob(id); err != nil {
		return nil, err
	}
	if !InMask(voxel) {
		return nil, ipc.Errorf(ipc.CodeBadRequest, "voxel %v lies outside the analysis mask", voxel)
	}
	vol := build("seed", false, func(v [3]int) float64 { return SeedCorrelation(voxel, v) })
	vol.Header.Seed = &voxel
	vol.Header.Millis = SeedMillis
	return vol, nil
}

func (s *Service) Series(ctx context.Context, id string, voxel [3]int) (ipc.Series, error) {
	s.record(fmt.Sprintf("series %d,%d,%d", voxel[0], voxel[1], voxel[2]))
	if err := s.checkJob(id); err != nil {
		return ipc.Series{}, err
	}
	if !InMask(voxel) {
		return ipc.Series{}, ipc.Errorf(ipc.CodeBadRequest, "voxel %v lies outside the analysis mask", voxel)
	}
	return ipc.Series{Voxel: voxel, TR: TR, Values: SeriesOf(voxel)}, nil
}

func (s *Service) Summary(ctx context.Context, id string) (ipc.Summary, error) {
	s.record("summary")
	if err := s.checkJob(id); err != nil {
		return ipc.Summary{}, err
	}
	return Summary(), nil
}

func (s *Service) Job(ctx context.Context, id string) (ipc.Job, error) {
	if err := s.checkJob(id); err != nil {
		return ipc.Job{}, err
	}
	return Summary().Job, nil
}

func (s *Service) Jobs(ctx context.Context) ([]ipc.Job, error) { return []ipc.Job{Summary().Job}, nil }

func (s *Service) Info(ctx context.Context) (ipc.Info, error) {
	return ipc.Info{App: "hubscope-helper (scripted)", API: ipc.Prefix, Backend: "cpu"}, nil
}

// The phantom job is finished; the calls below are not part of what it scripts.

func (s *Service) Upload(ctx context.Context, name string, body io.Reader) (ipc.Upload, error) {
	return ipc.Upload{}, ipc.Errorf(ipc.CodeForbidden, "the scripted helper takes no uploads")
}

func (s *Service) Submit(ctx context.Context, req ipc.JobRequest) (ipc.Job, error) {
	return ipc.Job{}, ipc.Errorf(ipc.CodeForbidden, "the scripted helper runs no jobs")
}

func (s *Service) Events(ctx context.Context, id string) (<-chan ipc.Event, error) {
	if err := s.checkJob(id); err != nil {
		return nil, err
	}
	c := make(chan ipc.Event, 1)
	c <- ipc.Event{Job: Summary().Job}
	close(c)
	return c, nil
}

func (s *Service) Cancel(ctx context.Context, id string) (ipc.Job, error) {
	return ipc.Job{}, ipc.Errorf(ipc.CodeConflict, "job %s has finished", id)
}

func (s *Service) Files(ctx context.Context, id string) ([]ipc.FileInfo, error) { return nil, nil }

func (s *Service) OpenFile(ctx context.Context, id, name string) (io.ReadCloser, ipc.FileInfo, error) {
	return nil, ipc.FileInfo{}, ipc.Errorf(ipc.CodeNotFound, "job %s has no file %q", id, name)
}

var _ ipc.Service = (*Service)(nil)
