package register

import (
	"context"
	"errors"
	"testing"
	"time"
)

// TestCancel: ToMNI stops with the context's error when cancelled part-way, at any stage (the
// issue: cancellable within a second). The known-affine phantom is cancelled after 0.2, 1 and
// 3 s of its registration; the time from the cancel to the return is logged (not asserted: the
// machine's load decides it) and must end in context.Canceled, not a result.
func TestCancel(t *testing.T) {
	tpl, err := Template()
	if err != nil {
		t.Fatal(err)
	}
	epi, _ := knownAffineScan(tpl, [3]float64{-105, -140, -90}, [3]int{60, 70, 62})
	for _, after := range []time.Duration{200 * time.Millisecond, time.Second, 3 * time.Second} {
		ctx, cancel := context.WithCancel(context.Background())
		var at time.Time
		timer := time.AfterFunc(after, func() { at = time.Now(); cancel() })
		res, err := ToMNI(ctx, epi, tpl)
		back := time.Now()
		timer.Stop()
		cancel()
		if at.IsZero() {
			t.Logf("cancel after %v: the registration finished first (%v)", after, err)
			continue
		}
		if res != nil || !errors.Is(err, context.Canceled) {
			t.Errorf("cancelled after %v: result %v, error %v; want context.Canceled", after, res != nil, err)
		}
		t.Logf("cancelled after %v: returned %v later", after, back.Sub(at).Round(time.Millisecond))
	}
}
