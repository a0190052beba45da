package ipc

import (
	"bytes"
	"context"
	"fmt"
	"github.com/hubscope/hubscope/ipc/schema"
	"github.com/hubscope/hubscope/ipc/settings"
	"io"
	"math"
	"strings"
	"sync"
	"sync/atomic"
	"time"
)

// scripted is a Service whose answers are fixed in the test and which records every call
// (with the transport it saw), so that tests can check what reached it and what did not.
type scripted struct {
	mu    sync.Mutex
	calls []string
	jobs  map[string]Job
	// script holds the events Events sends for a job, one every gap.
	script map[string][]Event
	gap    time.Duration
	// files are the bundle files OpenFile serves.
	files map[string]string
	// uploaded counts the bytes Upload read, per call.
	uploaded []int64
	// producers counts Events goroutines still running.
	producers atomic.Int64
	// flood makes the events of job "flood" endless, with padded messages, until ctx ends.
	floodPad int
}

func newScripted() *scripted {
	t0 := time.Date(2025, 3, 1, 9, 0, 0, 0, time.UTC)
	s := &scripted{
		jobs: map[string]Job{
			"j1":    {ID: "j1", Name: "sub-01_bold.nii.gz", State: JobRunning, Submitted: t0, Stage: "correlate", Fraction: 0.25, Backend: "cpu"},
			"j2":    {ID: "j2", Name: "sub-02_bold.nii.gz", State: JobDone, Submitted: t0},
			"flood": {ID: "flood", Name: "flood", State: JobRunning, Submitted: t0},
		},
		script:   map[string][]Event{},
		gap:      time.Millisecond,
		files:    map[string]string{"metrics.json": `{"density":0.01}`, "maps/degree.nii.gz": "\x1f\x8bnot really gzip"},
		floodPad: 32 << 10,
	}
	var evs []Event
	for k := 0; k < 5; k++ {
		j := s.jobs["j1"]
		j.Fraction = float64(k) / 4
		evs = append(evs, Event{Seq: int64(k), Time: t0.Add(time.Duration(k) * time.Second), Job: j, Done: int64(k), Total: 4})
	}
	evs[2].Message = "dropped 12 zero-variance voxels"
	end := s.jobs["j1"]
	end.State, end.Fraction = JobDone, 1
	evs = append(evs, Event{Seq: 5, Time: t0.Add(5 * time.Second), Job: end})
	s.script["j1"] = evs
	s.script["j2"] = []Event{{Seq: 0, Time: t0, Job: s.jobs["j2"]}}
	return s
}

func (s *scripted) record(ctx context.Context, format string, args ...any) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.calls = append(s.calls, string(TransportFrom(ctx))+" "+fmt.Sprintf(format, args...))
}

// Calls returns the calls recorded so far.
func (s *scripted) Calls() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]string(nil), s.calls...)
}

// Uploaded returns the byte counts Upload read, per call.
func (s *scripted) Uploaded() []int64 {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]int64(nil), s.uploaded...)
}

// called reports whether any recorded call starts with prefix (transport not counted).
func (s *scripted) called(method string) bool {
	for _, c := range s.Calls() {
		if _, rest, _ := strings.Cut(c, " "); strings.HasPrefix(rest, method) {
			return true
		}
	}
	return false
}

func (s *scripted) job(id string) (Job, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	j, ok := s.jobs[id]
	if !ok {
		return Job{}, Errorf(CodeNotFound, "no job %q", id)
	}
	return j, nil
}

func (s *scripted) Info(ctx context.Context) (Info, error) {
	s.record(ctx, "Info")
	return Info{App: schema.AppName, Version: schema.Version, Backend: "cpu", CPU: "scripted CPU", Cores: 2, FreeMemoryBytes: 1 << 30, ActiveJobs: 1}, nil
}

func (s *scripted) Upload(ctx context.Context, name string, body io.Reader) (Upload, error) {
	n, err := io.Copy(io.Discard, body)
	s.mu.Lock()
	s.uploaded = append(s.uploaded, n)
	s.mu.Unlock()
	s.record(ctx, "Upload %s %d", name, n)
	if err != nil {
		return Upload{}, fmt.Errorf("storing upload %s: %w", name, err)
	}
	return Upload{ID: "u1", Name: name, Size: n}, nil
}

func (s *scripted) Submit(ctx context.Context, req JobRequest) (Job, error) {
	s.record(ctx, "Submit scan=%q upload=%q", req.Scan, req.ScanUpload)
	if req.Scan == "" && req.ScanUpload == "" {
		return Job{}, Errorf(CodeBadRequest, "no scan")
	}
	if req.ScanUpload == "busy" {
		return Job{}, Errorf(CodeConflict, "upload busy is in use")
	}
	set := settings.Defaults()
	if req.Settings != nil {
		set = *req.Settings
	}
	return Job{ID: "j3", Name: req.Name, State: JobQueued, Settings: set, Submitted: time.Date(2025, 3, 1, 10, 0, 0, 0, time.UTC)}, nil
}

func (s *scripted) Jobs(ctx context.Context) ([]Job, error) {
	s.record(ctx, "Jobs")
	s.mu.Lock()
	defer s.mu.Unlock()
	return []Job{s.jobs["j2"], s.jobs["j1"]}, nil
}

func (s *scripted) Job(ctx context.Context, id string) (Job, error) {
	s.record(ctx, "Job %s", id)
	return s.job(id)
}

func (s *scripted) Events(ctx context.Context, id string) (<-chan Event, error) {
	s.record(ctx, "Events %s", id)
	j, err := s.job(id)
	if err != nil {
		return nil, err
	}
	s.mu.Lock()
	script := append([]Event(nil), s.script[id]...)
	gap, pad := s.gap, s.floodPad
	s.mu.Unlock()
	ch := make(chan Event)
	s.producers.Add(1)
	go func() {
		defer s.producers.Add(-1)
		defer close(ch)
		if id == "flood" {
			msg := strings.Repeat("x", pad)
			for seq := int64(0); ; seq++ {
				select {
				case ch <- Event{Seq: seq, Job: j, Message: msg}:
				case <-ctx.Done():
					return
				}
			}
		}
		for _, ev := range script {
			select {
			case ch <- ev:
			case <-ctx.Done():
				return
			}
			if ev.Job.State.Terminal() {
				return
			}
			select {
			case <-time.After(gap):
			case <-ctx.Done():
				return
			}
		}
		// A script without a terminal event holds the stream open, as a running job does.
		<-ctx.Done()
	}()
	return ch, nil
}

func (s *scripted) Cancel(ctx context.Context, id string) (Job, error) {
	s.record(ctx, "Cancel %s", id)
	j, err := s.job(id)
	if err != nil {
		return j, err
	}
	if j.State.Terminal() {
		return j, Errorf(CodeConflict, "job %s has ended", id)
	}
	j.State = JobCancelled
	return j, nil
}

func (s *scripted) Summary(ctx context.Context, id string) (Summary, error) {
	s.record(ctx, "Summary %s", id)
	j, err := s.job(id)
	if err != nil {
		return Summary{}, err
	}
	p := 0.4
	return Summary{Job: j, Bundle: "/results/" + id, Metrics: []byte(`{"density":0.01}`),
		Hubs:    []Hub{{Node: 7, Voxel: [3]int{1, 2, 3}, MNI: [3]float64{-30, 12, 40}, Degree: 88, Strength: 31.5, HubZ: 3.2, Module: 2, Participation: &p, Role: "connector", Region: "Precentral_L"}},
		Volumes: []string{"degree", "modules"}, Files: []FileInfo{{Name: "metrics.json", Size: 16}},
		Atlas: &AtlasInfo{Name: "AAL", Labels: map[int]string{1: "Precentral_L"}},
		DFC:   &schema.DFCSummary{Window: 30, Step: 5, TR: 2, Windows: []schema.DFCWindow{{Index: 0, Start: 0, Edges: 120, Measures: map[string]float64{"density": 0.01}}}},
	}, nil
}

func testVolume(name string) *Volume {
	v := &Volume{Header: VolumeHeader{Name: name, Dims: [3]int{4, 3, 2}, Min: 0, Max: 23,
		Affine: [4][4]float64{{-3, 0, 0, 90}, {0, 3, 0, -126}, {0, 0, 3, -72}, {0, 0, 0, 1}}}}
	for i := 0; i < 24; i++ {
		v.Data = append(v.Data, float32(i))
	}
	v.Data[3] = float32(math.NaN())
	return v
}

func (s *scripted) Volume(ctx context.Context, id, name string) (*Volume, error) {
	s.record(ctx, "Volume %s %s", id, name)
	if _, err := s.job(id); err != nil {
		return nil, err
	}
	if name != "degree" {
		return nil, Errorf(CodeNotFound, "job %s has no volume %q", id, name)
	}
	return testVolume(name), nil
}

func (s *scripted) SeedMap(ctx context.Context, id string, voxel [3]int) (*Volume, error) {
	s.record(ctx, "SeedMap %s %v", id, voxel)
	if _, err := s.job(id); err != nil {
		return nil, err
	}
	v := testVolume("seed")
	v.Header.Seed = &voxel
	v.Header.Millis = 4.5
	return v, nil
}

func (s *scripted) Series(ctx context.Context, id string, voxel [3]int) (Series, error) {
	s.record(ctx, "Series %s %v", id, voxel)
	if _, err := s.job(id); err != nil {
		return Series{}, err
	}
	return Series{Voxel: voxel, Node: 7, TR: 2, Values: []float32{1, -0.5, 0.25}}, nil
}

func (s *scripted) Files(ctx context.Context, id string) ([]FileInfo, error) {
	s.record(ctx, "Files %s", id)
	if _, err := s.job(id); err != nil {
		return nil, err
	}
	return []FileInfo{{Name: "maps/degree.nii.gz", Size: int64(len(s.files["maps/degree.nii.gz"]))}, {Name: "metrics.json", Size: 16}}, nil
}

func (s *scripted) OpenFile(ctx context.Context, id, name string) (io.ReadCloser, FileInfo, error) {
	s.record(ctx, "OpenFile %s %s", id, name)
	if _, err := s.job(id); err != nil {
		return nil, FileInfo{}, err
	}
	body, ok := s.files[name]
	if !ok {
		return nil, FileInfo{}, Errorf(CodeNotFound, "job %s has no file %q", id, name)
	}
	return io.NopCloser(bytes.NewReader([]byte(body))), FileInfo{Name: name, Size: int64(len(body))}, nil
}
