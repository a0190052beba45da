package dynamics

import (
	"context"
	"math"
	"strings"
	"testing"
	"time"

	"fyne.io/fyne/v2"
	"fyne.io/fyne/v2/test"

	"github.com/hubscope/hubscope/app/slices/slicestest"
)

// shown collects the windows the tab reports as shown.
type shown struct{ c chan int }

func (s shown) next(t *testing.T) int {
	t.Helper()
	select {
	case w := <-s.c:
		return w
	case <-time.After(20 * time.Second):
		t.Fatal("gave up waiting for a window to be shown")
		return -1
	}
}

// eventually waits (up to 20 s) for cond, which another goroutine makes true.
func eventually(t *testing.T, what string, cond func() bool) {
	t.Helper()
	for deadline := time.Now().Add(20 * time.Second); !cond(); time.Sleep(time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("gave up waiting until %s", what)
		}
	}
}

func loaded(t *testing.T) (*Tab, *slicestest.Service, shown, fyne.Window) {
	t.Helper()
	test.NewTempApp(t)
	svc := slicestest.NewService()
	tab := New(svc)
	w := test.NewTempWindow(t, tab)
	w.Resize(fyne.NewSize(1100, 520))
	s := shown{make(chan int, 16)}
	tab.OnWindowShown = func(w int, err error) {
		if err != nil {
			t.Errorf("window %d: %v", w, err)
		}
		s.c <- w
	}
	tab.Load(context.Background(), slicestest.JobID, slicestest.Summary())
	if w := s.next(t); w != 0 {
		t.Fatalf("first window shown %d", w)
	}
	return tab, svc, s, w
}

func TestScrubberShowsWindowAndMovesCursor(t *testing.T) {
	tab, svc, s, _ := loaded(t)
	if len(tab.plots) != 2 {
		t.Fatalf("%d timelines", len(tab.plots))
	}
	// One timeline per measure, against the windows' start times in seconds.
	for n, name := range []string{"density", "modularity"} {
		p := tab.plots[n]
		x, y := p.Data()
		if tab.measures[n] != name || len(x) != slicestest.DFCWindows {
			t.Fatalf("timeline %d: %q with %d points", n, tab.measures[n], len(x))
		}
		for w := range x {
			if x[w] != float64(w*slicestest.DFCStep)*slicestest.TR || y[w] != slicestest.DFCMeasure(name, w) {
				t.Fatalf("%s point %d: (%v, %v)", name, w, x[w], y[w])
			}
		}
		if c, ok := p.Cursor(); !ok || c != 0 {
			t.Fatalf("%s cursor %v %v before scrubbing", name, c, ok)
		}
	}

	tab.scrubber.SetValue(3) // as a drag of the scrubber does
	if w := s.next(t); w != 3 {
		t.Fatalf("window %d shown, want 3", w)
	}
	if svc.Count("volume dfc_degree@3") != 1 {
		t.Fatalf("requests %v", svc.Requests())
	}
	vol, name := tab.Viewer.Overlay()
	if name != "dfc_degree@3" || vol == nil {
		t.Fatalf("viewer overlay %q", name)
	}
	hub := slicestest.Hubs[0]
	if got := vol.At(hub[0], hub[1], hub[2]); float64(got) != slicestest.DFCDegree(3, hub) {
		t.Fatalf("window 3's map at the hub: %v", got)
	}
	start := float64(3*slicestest.DFCStep) * slicestest.TR // 30 s
	for _, p := range tab.plots {
		if c, ok := p.Cursor(); !ok || c != start {
			t.Errorf("cursor at %v (%v), want %v s", c, ok, start)
		}
	}
	if l := tab.windowLabel.Text; !strings.Contains(l, "Window 4 of 5") || !strings.Contains(l, "starts at 30.0 s") {
		t.Errorf("window label %q", l)
	}
	// Back to a window seen before: no second fetch.
	tab.SetWindow(0)
	if w := s.next(t); w != 0 || svc.Count("volume dfc_degree@0") != 1 {
		t.Fatalf("window %d; requests %v", w, svc.Requests())
	}
	if tab.scrubber.Value != 0 {
		t.Errorf("scrubber at %v after SetWindow(0)", tab.scrubber.Value)
	}
}

func TestScrubbingPastAWindowCancelsItsFetch(t *testing.T) {
	tab, svc, s, _ := loaded(t)
	release := svc.HoldVolume("dfc_degree@1")
	defer release()
	tab.scrubber.SetValue(1)
	eventually(t, "window 1's fetch reaches the helper", func() bool { return svc.Count("volume dfc_degree@1") == 1 })
	tab.scrubber.SetValue(2)
	if w := s.next(t); w != 2 {
		t.Fatalf("window %d shown, want 2 (window 1 was scrubbed past)", w)
	}
	eventually(t, "the abandoned fetch of window 1 ends", func() bool { return svc.Cancelled() == 1 })
	if _, name := tab.Viewer.Overlay(); name != "dfc_degree@2" {
		t.Fatalf("overlay %q", name)
	}
	select {
	case w := <-s.c:
		t.Fatalf("window %d reported after window 2", w)
	default:
	}
}

func TestNoDynamicAnalysis(t *testing.T) {
	test.NewTempApp(t)
	svc := slicestest.NewService()
	tab := New(svc)
	sum := slicestest.Summary()
	sum.DFC = nil
	tab.Load(context.Background(), slicestest.JobID, sum)
	if tab.body.Visible() || !tab.empty.Visible() || !strings.Contains(tab.empty.Text, "No dynamic connectivity for phantom") {
		t.Fatalf("body visible %v, empty %q", tab.body.Visible(), tab.empty.Text)
	}
	for _, r := range svc.Requests() {
		if strings.HasPrefix(r, "volume") {
			t.Errorf("fetched %q for a job without windows", r)
		}
	}
	tab.SetWindow(2) // nothing to show: no panic, no fetch
	if len(svc.Requests()) != 0 {
		t.Errorf("requests %v", svc.Requests())
	}
}

func TestMissingMeasureLeavesGap(t *testing.T) {
	test.NewTempApp(t)
	tab := New(slicestest.NewService())
	sum := slicestest.Summary()
	sum.DFC.Windows[2].Measures = map[string]float64{"density": 0.02}
	s := shown{make(chan int, 1)}
	tab.OnWindowShown = func(w int, err error) { s.c <- w }
	tab.Load(context.Background(), slicestest.JobID, sum)
	s.next(t)
	_, y := tab.plots[1].Data() // modularity
	if !math.IsNaN(y[2]) || math.IsNaN(y[1]) {
		t.Fatalf("modularity %v: want a gap at window 2 only", y)
	}
}

func TestDynamicsGolden(t *testing.T) {
	tab, _, s, w := loaded(t)
	tab.SetWindow(4)
	s.next(t)
	tab.SetWindow(1) // drawn on window 4's colour scale
	s.next(t)
	tab.Viewer.SetCrosshair(slicestest.Hubs[0])
	test.AssertRendersToImage(t, "dynamics.png", w.Canvas())
}

func TestOneColourScaleAcrossWindows(t *testing.T) {
	tab, _, s, _ := loaded(t)
	top0 := tab.Viewer.Style().Max
	if top0 != slicestest.DFCDegree(0, slicestest.Hubs[0]) {
		t.Fatalf("window 0's scale tops at %v", top0)
	}
	tab.SetWindow(4)
	s.next(t)
	top4 := slicestest.DFCDegree(4, slicestest.Hubs[0])
	if st := tab.Viewer.Style(); st.Max != top4 {
		t.Fatalf("window 4's scale tops at %v, want %v", st.Max, top4)
	}
	// Back at window 0, its map is drawn on window 4's scale: darker, not re-stretched.
	tab.SetWindow(0)
	s.next(t)
	if st := tab.Viewer.Style(); st.Max != top4 {
		t.Fatalf("window 0 revisited: scale tops at %v, want %v", st.Max, top4)
	}
}
