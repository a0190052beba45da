package graph

import (
	"context"
	"errors"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"
)

// overlapDevice is the CPU's accelerator posing as a device: its triangle counts of a random
// network wait until PerRandom has started on that network, which only happens when the hook
// runs beside the device work.
type overlapDevice struct {
	CPU
	mu      sync.Mutex
	started map[*Graph]signal
	waited  int
}

// signal is closed (cancelled) once PerRandom has started on its network.
type signal struct {
	ctx  context.Context
	done context.CancelFunc
}

func (d *overlapDevice) signal(r *Graph) signal {
	d.mu.Lock()
	defer d.mu.Unlock()
	c, ok := d.started[r]
	if !ok {
		c.ctx, c.done = context.WithCancel(context.Background())
		d.started[r] = c
	}
	return c
}

func (d *overlapDevice) Triangles(ctx context.Context, g *Graph) ([]int64, error) {
	d.mu.Lock()
	_, random := d.started[g]
	d.mu.Unlock()
	if g.N > 0 && random {
		select {
		case <-d.signal(g).ctx.Done():
			d.mu.Lock()
			d.waited++
			d.mu.Unlock()
		case <-time.After(20 * time.Second): // a deadlock guard, not a timing check
			return nil, errors.New("PerRandom did not start beside the device work")
		}
	}
	return d.CPU.Triangles(ctx, g)
}

func (d *overlapDevice) Rewire(ctx context.Context, g *Graph, opt RewireOptions) (*Graph, RewireStats, error) {
	r, st, err := d.CPU.Rewire(ctx, g, opt)
	if err == nil {
		d.signal(r) // r is a random network: its triangles wait for the hook
	}
	return r, st, err
}

// With a device accelerator, SmallWorld's PerRandom runs while the network's triangles and
// searches run on the device; the results are those of the CPU's order, and an error of the
// hook still stops the run.
func TestSmallWorldHookBesideDevice(t *testing.T) {
	ctx := context.Background()
	g := geometricGraph(t, 300, 0.12, 5)
	var mu sync.Mutex
	hook := func(d *overlapDevice, seen map[int]bool) func(int, *Graph) error {
		return func(k int, r *Graph) error {
			if d != nil {
				d.signal(r).done()
			}
			if !slices.Equal(Degrees(r), Degrees(g)) {
				return errors.New("random network does not keep the degrees")
			}
			mu.Lock()
			seen[k] = true
			mu.Unlock()
			return nil
		}
	}
	opt := SmallWorldOptions{Random: 5, Seed: 3}
	seenCPU := map[int]bool{}
	opt.PerRandom = hook(nil, seenCPU)
	want, err := SmallWorld(ctx, g, opt, nil)
	if err != nil {
		t.Fatal(err)
	}
	d := &overlapDevice{started: map[*Graph]signal{}}
	seen := map[int]bool{}
	opt.Accelerator, opt.PerRandom = d, hook(d, seen)
	got, err := SmallWorld(ctx, g, opt, nil)
	if err != nil {
		t.Fatal(err)
	}
	if len(seen) != 5 || len(seenCPU) != 5 || d.waited != 5 {
		t.Fatalf("PerRandom saw %d networks (CPU order %d); %d triangle counts waited for it", len(seen), len(seenCPU), d.waited)
	}
	if !slices.Equal(got.RandomClustering, want.RandomClustering) || !slices.Equal(got.RandomPathLength, want.RandomPathLength) || got.Sigma != want.Sigma {
		t.Errorf("beside the device: C_rand %v L_rand %v σ %v; in order: %v %v %v",
			got.RandomClustering, got.RandomPathLength, got.Sigma, want.RandomClustering, want.RandomPathLength, want.Sigma)
	}
	d = &overlapDevice{started: map[*Graph]signal{}}
	opt.Accelerator = d
	opt.PerRandom = func(_ int, r *Graph) error {
		d.signal(r).done()
		return errors.New("boom")
	}
	if _, err := SmallWorld(ctx, g, opt, nil); err == nil || !strings.Contains(err.Error(), "boom") {
		t.Fatalf("PerRandom's error beside the device: %v", err)
	}
}

// holdingDevice counts the holds of RewireFirst; its "device work" (measure in the test below)
// waits while a hold is kept, as plain work on the CUDA device thread does.
type holdingDevice struct {
	CPU
	mu    sync.Mutex
	holds int
}

func (d *holdingDevice) HoldForRewiring() func() {
	d.mu.Lock()
	d.holds++
	d.mu.Unlock()
	var once sync.Once
	return func() {
		once.Do(func() {
			d.mu.Lock()
			d.holds--
			d.mu.Unlock()
		})
	}
}

// waitUnheld waits until no hold is kept (false after the deadlock guard).
func (d *holdingDevice) waitUnheld() bool {
	deadline := time.Now().Add(20 * time.Second) // a deadlock guard, not a timing check
	d.mu.Lock()
	defer d.mu.Unlock()
	for d.holds > 0 {
		if time.Now().After(deadline) {
			return false
		}
		d.mu.Unlock()
		time.Sleep(time.Millisecond)
		d.mu.Lock()
	}
	return true
}

// rewireAhead makes the networks in order under the device's hold, at most `ahead` alive at
// once, and lets the hold go while it waits for a slot: the networks' device work, which
// frees the slots, would otherwise wait for ever. The first error is returned.
func TestRewireAheadHoldsAndOrder(t *testing.T) {
	ctx := context.Background()
	d := &holdingDevice{}
	g := geometricGraph(t, 60, 0.3, 2)
	var mu sync.Mutex
	var made []int
	alive, most := 0, 0
	rewire := func(_ context.Context, lo int) (*Graph, RewireStats, error) {
		d.mu.Lock()
		held := d.holds
		d.mu.Unlock()
		if held == 0 {
			return nil, RewireStats{}, errors.New("rewiring without the hold")
		}
		mu.Lock()
		made = append(made, lo)
		alive++
		most = max(most, alive)
		mu.Unlock()
		return g, RewireStats{}, nil
	}
	measured := make([]bool, 7)
	measure := func(_ context.Context, lo int, _ *Graph, _ RewireStats) error {
		if !d.waitUnheld() {
			return errors.New("the device work waited for the hold for ever")
		}
		mu.Lock()
		measured[lo] = true
		alive--
		mu.Unlock()
		return nil
	}
	if err := rewireAhead(ctx, 7, 2, d, rewire, measure); err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(made, []int{0, 1, 2, 3, 4, 5, 6}) || slices.Contains(measured, false) || most > 2 || d.holds != 0 {
		t.Fatalf("made %v, measured %v, %d alive at most (want ≤ 2), %d holds left", made, measured, most, d.holds)
	}
	boom := func(_ context.Context, lo int, _ *Graph, _ RewireStats) error {
		if lo == 2 {
			return errors.New("boom")
		}
		return measure(ctx, lo, nil, RewireStats{})
	}
	made, measured, alive = nil, make([]bool, 7), 0
	if err := rewireAhead(ctx, 7, 2, d, rewire, boom); err == nil || err.Error() != "boom" {
		t.Fatalf("measure's error: %v", err)
	}
	if d.holds != 0 {
		t.Fatalf("%d holds left after an error", d.holds)
	}
}
