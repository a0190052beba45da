package dfc

import (
	"context"
	"testing"

	"github.com/hubscope/hubscope/helper/backend/cpu"
	"github.com/hubscope/hubscope/helper/fc"
	"github.com/hubscope/hubscope/helper/synth"
)

// A phantom whose coupling changes half-way: module 1 is coupled (ρ = 0.5) in the first half
// of the scan and nearly uncoupled (ρ = 0.02) in the second, the other modules stay at
// ρ = 0.5 throughout. The windows must show module 1's degree collapse in the late windows and
// nowhere else; windows straddling the change lie in between.
func TestPlantedCouplingChange(t *testing.T) {
	mask, affine, err := synth.DemoMask()
	if err != nil {
		t.Fatal(err)
	}
	mask, affine = synth.ResampleMask(mask, affine, 12)
	const half, w, s = 60, 30, 6
	T := 2 * half
	// Same seed, so the same parcellation, module signals and noise; only the mixing differs.
	gen := func(rho float64) ([]float32, []int32, int) {
		p := synth.DefaultParams()
		p.Length, p.Hubs, p.ModuleCorrelation, p.Modules = T, 0, rho, 4
		sc, truth, err := synth.Generate(mask, affine, p)
		if err != nil {
			t.Fatal(err)
		}
		return sc.Data, truth.Modules, sc.N
	}
	coupled, modules, n := gen(0.5)
	loose, _, _ := gen(0.02)
	// Module 1 follows the coupled phantom up to volume half, the loose one after it.
	x := coupled
	affected := 0
	for v := 0; v < n; v++ {
		if modules[v] == 1 {
			copy(x[v*T+half:(v+1)*T], loose[v*T+half:(v+1)*T])
			affected++
		}
	}
	t.Logf("%d nodes, %d in module 1, %d volumes", n, affected, T)
	if affected == 0 || affected == n {
		t.Fatal("module 1 is empty or everything")
	}
	be := cpu.New(cpu.Options{})
	defer be.Close()
	res, err := Run(context.Background(), be, x, n, T, Options{Window: w, Step: s, FC: fc.Config{Mode: fc.Strength, Threshold: 0.3}}, nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	meanDeg := func(win Window, inModule1 bool) float64 {
		var sum, c float64
		for v, d := range win.Degree {
			if (modules[v] == 1) == inModule1 {
				sum += float64(d)
				c++
			}
		}
		return sum / c
	}
	var aEarly, aLate, oEarly, oLate, ne, nl float64
	minEarly, maxLate := 1e300, 0.0 // module 1's degree over the windows wholly before / after
	for _, win := range res.Windows {
		a, o := meanDeg(win, true), meanDeg(win, false)
		t.Logf("window %2d (volumes %3d–%3d): module 1 mean degree %6.1f, others %6.1f", win.Index, win.Start, win.Start+w-1, a, o)
		switch {
		case win.Start+w <= half:
			aEarly, oEarly, ne = aEarly+a, oEarly+o, ne+1
			minEarly = min(minEarly, a)
		case win.Start >= half:
			aLate, oLate, nl = aLate+a, oLate+o, nl+1
			maxLate = max(maxLate, a)
		}
	}
	aEarly, aLate, oEarly, oLate = aEarly/ne, aLate/nl, oEarly/ne, oLate/nl
	if !(aLate < 0.4*aEarly) || !(maxLate < minEarly) {
		t.Errorf("module 1: mean degree %0.1f early, %0.1f late (late windows up to %.1f, early down to %.1f); want every late window below every early one, on average below 40 %%", aEarly, aLate, maxLate, minEarly)
	}
	if oLate < 0.7*oEarly || oLate > 1.4*oEarly {
		t.Errorf("unaffected modules: mean degree %0.1f early, %0.1f late; want them within 30 %%", oEarly, oLate)
	}
	// The nodal variability map singles out the affected module.
	var sdA, sdO float64
	for v, sd := range res.DegreeSD {
		if modules[v] == 1 {
			sdA += sd / float64(affected)
		} else {
			sdO += sd / float64(n-affected)
		}
	}
	if !(sdA > 1.4*sdO) {
		t.Errorf("degree SD over windows: module 1 %.1f, others %.1f; want module 1's above 1.4 × the others'", sdA, sdO)
	}
}
