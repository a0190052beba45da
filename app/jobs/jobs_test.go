package jobs

import (
	"context"
	"errors"
	"io"
	"strings"
	"sync"
	"testing"
	"time"

	"fyne.io/fyne/v2"
	"fyne.io/fyne/v2/test"
	"fyne.io/fyne/v2/widget"

	"github.com/hubscope/hubscope/ipc"
)

// scripted is a helper whose event streams the test writes event by event.
type scripted struct {
	ipc.Service // other methods are not used by the job list

	mu        sync.Mutex
	listed    []ipc.Job
	streams   map[string]chan ipc.Event
	opened    chan string // job IDs whose stream was opened
	cancelled chan string
}

func newScripted(listed ...ipc.Job) *scripted {
	return &scripted{listed: listed, streams: map[string]chan ipc.Event{}, opened: make(chan string, 16), cancelled: make(chan string, 4)}
}

func (s *scripted) stream(id string) chan ipc.Event {
	s.mu.Lock()
	defer s.mu.Unlock()
	ch, ok := s.streams[id]
	if !ok {
		ch = make(chan ipc.Event)
		s.streams[id] = ch
	}
	return ch
}

func (s *scripted) Jobs(context.Context) ([]ipc.Job, error) { return s.listed, nil }

func (s *scripted) Submit(_ context.Context, req ipc.JobRequest) (ipc.Job, error) {
	if strings.HasSuffix(req.Scan, "bad.nii") {
		return ipc.Job{}, ipc.Errorf(ipc.CodeBadRequest, "scan %s: not a 4D image", req.Scan)
	}
	return ipc.Job{ID: "new", Name: "sub-02.nii.gz", State: ipc.JobQueued, Submitted: time.Unix(2000, 0)}, nil
}

func (s *scripted) Events(ctx context.Context, id string) (<-chan ipc.Event, error) {
	if id == "gone" {
		return nil, ipc.Errorf(ipc.CodeNotFound, "no job %s", id)
	}
	in := s.stream(id)
	s.opened <- id
	out := make(chan ipc.Event)
	go func() {
		defer close(out)
		for {
			select {
			case <-ctx.Done():
				return
			case ev, ok := <-in:
				if !ok {
					// The test closed the stream: a broken connection. The next Events call
					// gets a fresh stream.
					s.mu.Lock()
					delete(s.streams, id)
					s.mu.Unlock()
					return
				}
				out <- ev
			}
		}
	}()
	return out, nil
}

func (s *scripted) Cancel(_ context.Context, id string) (ipc.Job, error) {
	s.cancelled <- id
	return ipc.Job{}, errors.New("the job already ended")
}

func (s *scripted) OpenFile(context.Context, string, string) (io.ReadCloser, ipc.FileInfo, error) {
	return nil, ipc.FileInfo{}, errors.New("unused")
}

type harness struct {
	t       *testing.T
	l       *List
	svc     *scripted
	w       fyne.Window
	applied chan string
}

func newHarness(t *testing.T, svc *scripted) *harness {
	test.NewTempApp(t)
	ctx, cancel := context.WithCancel(context.Background())
	t.Cleanup(cancel)
	h := &harness{t: t, svc: svc, applied: make(chan string, 64)}
	h.l = New(ctx, svc)
	h.l.applied = func(id string) { h.applied <- id }
	h.w = test.NewTempWindow(t, h.l.Widget)
	h.w.Resize(fyne.NewSize(700, 400))
	return h
}

func (h *harness) wait(what string, ch <-chan string, want string) {
	h.t.Helper()
	for {
		select {
		case id := <-ch:
			if id == want {
				return
			}
		case <-time.After(10 * time.Second):
			h.t.Fatalf("timed out waiting for %s of %s", what, want)
		}
	}
}

// send gives the job's stream one event and waits until the list has shown it.
func (h *harness) send(ev ipc.Event) {
	h.t.Helper()
	h.drain()
	h.svc.stream(ev.Job.ID) <- ev
	h.wait("event", h.applied, ev.Job.ID)
}

// drain forgets updates already shown, so that the next wait sees a new one.
func (h *harness) drain() {
	for {
		select {
		case <-h.applied:
		default:
			return
		}
	}
}

// view returns the row view showing job id.
func (h *harness) view(id string) *RowView {
	h.t.Helper()
	h.l.Widget.Refresh()
	for _, o := range test.LaidOutObjects(h.w.Content()) {
		if v, ok := o.(*RowView); ok && v.id == id && v.Visible() {
			return v
		}
	}
	h.t.Fatalf("no row shows job %s", id)
	return nil
}

func running(id string, stage string, frac, eta float64) ipc.Event {
	return ipc.Event{Job: ipc.Job{ID: id, Name: "sub-01.nii.gz", State: ipc.JobRunning, Stage: stage, Fraction: frac, ETASeconds: eta, Submitted: time.Unix(1000, 0)}}
}

func TestProgressFromEvents(t *testing.T) {
	svc := newScripted(ipc.Job{ID: "a", Name: "sub-01.nii.gz", State: ipc.JobQueued, Submitted: time.Unix(1000, 0)})
	h := newHarness(t, svc)
	var finished []string
	h.l.OnFinished = func(j ipc.Job) { finished = append(finished, j.ID) }
	if err := h.l.Load(context.Background()); err != nil {
		t.Fatal(err)
	}
	h.wait("stream", svc.opened, "a")

	ev := running("a", "correlation", 0.42, 150)
	ev.Message = "threshold r ≥ 0.313 keeps 1 % of pairs"
	h.send(ev)
	v := h.view("a")
	if v.Bar.Value != 0.42 || v.ETA.Text != "about 3 min left" || v.Stage.Text != "correlation" || v.State.Text != "Running" {
		t.Errorf("running row: bar %v, eta %q, stage %q, state %q", v.Bar.Value, v.ETA.Text, v.Stage.Text, v.State.Text)
	}
	if v.Note.Text != "threshold r >= 0.313 keeps 1 % of pairs" || v.Cancel.Disabled() || !v.Open.Disabled() {
		t.Errorf("note %q, cancel disabled %v, open disabled %v", v.Note.Text, v.Cancel.Disabled(), v.Open.Disabled())
	}

	h.send(running("a", "modules", 0.9, 4))
	if v := h.view("a"); v.Bar.Value != 0.9 || v.ETA.Text != "a few seconds left" || v.Stage.Text != "modules" {
		t.Errorf("second event: bar %v, eta %q, stage %q", v.Bar.Value, v.ETA.Text, v.Stage.Text)
	}

	done := running("a", "", 1, 0)
	done.Job.State = ipc.JobDone
	h.send(done)
	v = h.view("a")
	if v.State.Text != "Finished" || v.Bar.Value != 1 || v.ETA.Text != "" || v.Open.Disabled() || !v.Cancel.Disabled() {
		t.Errorf("done row: state %q bar %v eta %q open disabled %v cancel disabled %v", v.State.Text, v.Bar.Value, v.ETA.Text, v.Open.Disabled(), v.Cancel.Disabled())
	}
	if len(finished) != 1 || finished[0] != "a" {
		t.Errorf("OnFinished calls %v", finished)
	}
	var opened []string
	h.l.OnOpen = func(j ipc.Job) { opened = append(opened, j.ID) }
	test.Tap(v.Open)
	if len(opened) != 1 {
		t.Errorf("Open tapped: OnOpen calls %v", opened)
	}
}

func TestErrorsInWords(t *testing.T) {
	svc := newScripted()
	h := newHarness(t, svc)
	if _, err := h.l.Submit(context.Background(), ipc.JobRequest{Scan: "/d/bad.nii"}); err == nil || !strings.Contains(err.Error(), "not a 4D image") {
		t.Fatalf("submit of a bad scan: %v", err)
	}
	if _, err := h.l.Submit(context.Background(), ipc.JobRequest{Scan: "/d/sub-02.nii.gz"}); err != nil {
		t.Fatal(err)
	}
	h.wait("stream", svc.opened, "new")
	if v := h.view("new"); v.State.Text != "Waiting" || v.Stage.Text != "waiting for the helper" {
		t.Errorf("queued row: %q %q", v.State.Text, v.Stage.Text)
	}
	failed := ipc.Event{Job: ipc.Job{ID: "new", Name: "sub-02.nii.gz", State: ipc.JobFailed, Error: "sub-02.nii.gz: only 3 volumes; at least 10 are needed", Submitted: time.Unix(2000, 0)}}
	h.send(failed)
	v := h.view("new")
	if v.Note.Text != "The analysis failed: sub-02.nii.gz: only 3 volumes; at least 10 are needed" || v.Note.Importance != widget.DangerImportance {
		t.Errorf("failed row note %q (importance %v)", v.Note.Text, v.Note.Importance)
	}
	if v.State.Text != "Failed" || !v.Cancel.Disabled() || !v.Open.Disabled() {
		t.Errorf("failed row: state %q cancel disabled %v open disabled %v", v.State.Text, v.Cancel.Disabled(), v.Open.Disabled())
	}
}

func TestCancelCallsService(t *testing.T) {
	svc := newScripted(ipc.Job{ID: "a", Name: "sub-01.nii.gz", State: ipc.JobRunning, Submitted: time.Unix(1000, 0)})
	h := newHarness(t, svc)
	h.l.Load(context.Background())
	h.wait("stream", svc.opened, "a")
	h.send(running("a", "correlation", 0.1, 60))
	h.drain()
	test.Tap(h.view("a").Cancel)
	h.wait("cancel", svc.cancelled, "a")
	h.wait("cancel reply", h.applied, "a")
	if r, _ := h.l.Get("a"); r.Note != "Could not cancel: the job already ended" {
		t.Errorf("refused cancel: note %q", r.Note)
	}
}

// Earlier sessions' jobs appear, interrupted ones as interrupted; a stream that breaks is
// reopened, and the restarted helper's verdict is shown.
func TestEarlierAndInterruptedJobs(t *testing.T) {
	svc := newScripted(
		ipc.Job{ID: "old", Name: "old.nii", State: ipc.JobDone, Submitted: time.Unix(10, 0)},
		ipc.Job{ID: "cut", Name: "cut.nii", State: ipc.JobInterrupted, Error: "the helper stopped (killed)", Submitted: time.Unix(20, 0)},
		ipc.Job{ID: "live", Name: "live.nii", State: ipc.JobRunning, Submitted: time.Unix(30, 0)},
	)
	h := newHarness(t, svc)
	h.l.Load(context.Background())
	h.wait("listing", h.applied, "live")
	var names []string
	for i := range h.l.Len() {
		r, _ := h.l.Row(i)
		names = append(names, r.Job.Name)
	}
	if strings.Join(names, " ") != "live.nii cut.nii old.nii" {
		t.Errorf("rows %v, want newest first", names)
	}
	if v := h.view("cut"); v.State.Text != "Interrupted" || !strings.HasPrefix(v.Note.Text, "Interrupted (the helper stopped (killed))") || v.Bar.Value == 1 {
		t.Errorf("interrupted row: state %q note %q bar %v", v.State.Text, v.Note.Text, v.Bar.Value)
	}
	if v := h.view("old"); v.State.Text != "Finished" || v.Open.Disabled() {
		t.Errorf("earlier finished job: state %q, open disabled %v", v.State.Text, v.Open.Disabled())
	}

	h.wait("stream", svc.opened, "live")
	h.send(running("live", "correlation", 0.5, 30))
	h.drain()
	close(svc.stream("live")) // the helper died
	h.wait("lost contact", h.applied, "live")
	if r, _ := h.l.Get("live"); !strings.HasPrefix(r.Note, "Lost contact with the helper") {
		t.Errorf("broken stream: note %q", r.Note)
	}
	h.wait("reconnect", svc.opened, "live")
	cut := running("live", "", 0.5, 0)
	cut.Job.State, cut.Job.Error = ipc.JobInterrupted, "the helper stopped while it ran"
	h.send(cut)
	if v := h.view("live"); v.State.Text != "Interrupted" || !v.Cancel.Disabled() {
		t.Errorf("after reconnect: state %q, cancel disabled %v", v.State.Text, v.Cancel.Disabled())
	}
}

func TestETAText(t *testing.T) {
	for s, want := range map[float64]string{0: "", -1: "", 3: "a few seconds left", 42: "about 40 s left", 150: "about 3 min left", 7200: "about 2.0 h left"} {
		if got := ETAText(s); got != want {
			t.Errorf("ETAText(%v) = %q, want %q", s, got, want)
		}
	}
}

// The stages running beside the main one are named, each with its share done; the row shows
// them under the stage while the job runs, and nothing otherwise.
func TestBesideText(t *testing.T) {
	for _, c := range []struct {
		j    ipc.Job
		want string
	}{
		{ipc.Job{Stage: "modules"}, ""},
		{ipc.Job{Stage: "modules", Beside: []ipc.StageProgress{{Stage: "random networks", Fraction: 0.4, Done: 6, Total: 15}, {Stage: "global measures"}}},
			"beside it: random networks 40%, global measures"},
		{ipc.Job{Beside: []ipc.StageProgress{{Stage: "random networks", Fraction: 0.999, Done: 999, Total: 1000}}}, "beside it: random networks 99%"},
	} {
		if got := BesideText(c.j); got != c.want {
			t.Errorf("BesideText(%+v) = %q, want %q", c.j, got, c.want)
		}
	}
	v := newRowView(&List{})
	running := ipc.Job{ID: "j", State: ipc.JobRunning, Stage: "modules", Beside: []ipc.StageProgress{{Stage: "random networks", Fraction: 0.4, Total: 15, Done: 6}}}
	v.show(Row{Job: running})
	if !v.Beside.Visible() || v.Beside.Text != "beside it: random networks 40%" || v.Stage.Text != "modules" {
		t.Errorf("running row: beside %v %q, stage %q", v.Beside.Visible(), v.Beside.Text, v.Stage.Text)
	}
	running.State, running.Beside = ipc.JobDone, nil
	v.show(Row{Job: running})
	if v.Beside.Visible() {
		t.Errorf("finished row still shows %q", v.Beside.Text)
	}
}
