package synth

import (
	"crypto/sha256"
	"encoding/binary"
	"fmt"
	"math"
	"runtime"
	"slices"
	"testing"
)

// The single-scan phantom (W7, C5 and every recovery test) does not move when cohorts grade
// their modules: its series hash as they did before graded modules existed (amd64, where the
// generator is bit-reproducible; see the package comment), and a cohort subject with
// CoreCorrelation 0 is the uniform one of before too.
func TestUniformPhantomUnchanged(t *testing.T) {
	if runtime.GOARCH != "amd64" {
		t.Skip("the golden hashes are amd64's")
	}
	m, a, err := DemoMask()
	if err != nil {
		t.Fatal(err)
	}
	m, a = ResampleMask(m, a, 12)
	for _, c := range []struct {
		p    Params
		want string
	}{
		{DefaultParams(), "ee0a15eb355e393c"},
		{SubjectParams(DefaultParams(), 3), "2a875e84c3a2beac"},
	} {
		sc, _, err := Generate(m, a, c.p)
		if err != nil {
			t.Fatal(err)
		}
		h := sha256.New()
		binary.Write(h, binary.LittleEndian, sc.Data)
		if got := fmt.Sprintf("%x", h.Sum(nil)[:8]); got != c.want {
			t.Errorf("subject seed %d: series hash %s, want %s", c.p.SubjectSeed, got, c.want)
		}
	}
}

// The graded cohort's group mean (mean Fisher z over subjects, back to r, float64 here) has
// the sparsities graded.go derives at r̄ 0.45 … 0.70 — those of Wang et al.'s 197-subject
// mean, 0.151 … 0.023 % — with its strongest nodes in the modules' cores and the planted hubs
// linking modules; the uniform cohort of before keeps almost nothing at r̄ ≥ 0.45.
func TestGradedCohortGroupMean(t *testing.T) {
	m, a, err := DemoMask()
	if err != nil {
		t.Fatal(err)
	}
	if raceEnabled {
		t.Skip("O(N²·S·L) single-goroutine check; TestCohortMatrixLayout runs the generator under -race")
	}
	subjects := 8
	m, a = ResampleMask(m, a, 12)
	density := func(p Params) ([]float64, []int, *Truth) {
		x, n, err := CohortMatrix(m, a, p, subjects, runtime.GOMAXPROCS(0))
		if err != nil {
			t.Fatal(err)
		}
		L := p.Length
		// Each subject's series normalised: r is then a dot product.
		u := make([]float64, len(x))
		for v := range n {
			for s := range subjects {
				row, dst := x[(v*subjects+s)*L:][:L], u[(v*subjects+s)*L:][:L]
				mean := 0.0
				for _, y := range row {
					mean += float64(y)
				}
				mean /= float64(L)
				ss := 0.0
				for i, y := range row {
					dst[i] = float64(y) - mean
					ss += dst[i] * dst[i]
				}
				for i := range dst {
					dst[i] /= math.Sqrt(ss)
				}
			}
		}
		thr := []float64{0.45, 0.5, 0.55, 0.6, 0.65, 0.7}
		edges := make([]int, len(thr))
		deg := make([]int, n)
		for i := range n {
			for j := i + 1; j < n; j++ {
				z := 0.0
				for s := range subjects {
					r := 0.0
					for k, ui := range u[(i*subjects+s)*L:][:L] {
						r += ui * u[(j*subjects+s)*L+k]
					}
					z += math.Atanh(math.Max(-0.9999999, math.Min(0.9999999, r)))
				}
				rbar := math.Tanh(z / float64(subjects))
				for k, th := range thr {
					if rbar > th {
						edges[k]++
					}
				}
				if rbar > thr[0] {
					deg[i]++
					deg[j]++
				}
			}
		}
		_, truth, _ := Generate(m, a, p)
		d := make([]float64, len(thr))
		for k, e := range edges {
			d[k] = float64(e) / (float64(n) * float64(n-1) / 2)
		}
		return d, deg, truth
	}
	p := DefaultCohortParams()
	d, deg, truth := density(p)
	t.Logf("%d subjects, %d nodes: density at r̄ 0.45 … 0.70: %.4f %%", subjects, m.Count(), scale(d, 100))
	// graded.go's expectation is 0.18 … 0.02 %; a small grid's modules are uneven, its planted
	// hubs a larger share of the nodes and its few subjects' mean noisier: a factor of 3.
	want := []float64{0.0018, 0.0012, 0.0008, 0.0005, 0.0003, 0.0002}
	for k := range d {
		if d[k] < want[k]/3 || d[k] > want[k]*3 || (k > 0 && d[k] >= d[k-1]) {
			t.Errorf("density %.4f %% at threshold %d, want about %.2f %% and below the looser one's", 100*d[k], k, 100*want[k])
		}
	}
	// The best-connected node at r̄ > 0.45 lies in a module's core, not at its border; the
	// planted hubs reach into the cores of the modules they couple.
	top := 0
	for v := range deg {
		if deg[v] > deg[top] {
			top = v
		}
	}
	g, err := newGenerator(m, a, p)
	if err != nil {
		t.Fatal(err)
	}
	if rho := g.load[top] * g.load[top]; rho < 0.8 {
		t.Errorf("strongest node %d (degree %d) shares %.2f of its variance with its module, want a core voxel (≥ 0.8)", top, deg[top], rho)
	}
	linked := 0
	for _, h := range truth.Hubs {
		if deg[h] > 0 {
			linked++
		}
	}
	if linked < len(truth.Hubs)/2 {
		t.Errorf("%d of %d planted hubs have an edge at r̄ > 0.45", linked, len(truth.Hubs))
	}
	// Uniform modules (the cohort of before): little but hub–hub pairs at r̄ > 0.45.
	p.CoreCorrelation = 0
	if d0, _, _ := density(p); d0[0] > d[0]/5 {
		t.Errorf("uniform cohort: density %.4f %% at r̄ 0.45", 100*d0[0])
	}
}

func scale(x []float64, f float64) []float64 {
	y := make([]float64, len(x))
	for i := range x {
		y[i] = x[i] * f
	}
	return y
}

// CohortMatrix's subject s is WriteCohort's sub-s before quantisation.
func TestCohortMatrixLayout(t *testing.T) {
	m, a, err := DemoMask()
	if err != nil {
		t.Fatal(err)
	}
	m, a = ResampleMask(m, a, 16)
	p := DefaultCohortParams()
	p.Length = 40
	x, n, err := CohortMatrix(m, a, p, 3, 2)
	if err != nil {
		t.Fatal(err)
	}
	for s := 1; s <= 3; s++ {
		sc, _, err := Generate(m, a, SubjectParams(p, s))
		if err != nil {
			t.Fatal(err)
		}
		for v := range n {
			if !slices.Equal(x[(v*3+s-1)*p.Length:][:p.Length], sc.Data[v*p.Length:][:p.Length]) {
				t.Fatalf("subject %d node %d differs", s, v)
			}
		}
	}
	if _, _, err := CohortMatrix(m, a, p, 0, 1); err == nil {
		t.Error("0 subjects accepted")
	}
}
