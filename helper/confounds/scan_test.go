package confounds

import (
	"encoding/binary"
	"encoding/json"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/hubscope/hubscope/helper/internal/pyref"
)

// TestHighVarianceConfoundsEqualsNilearn: tCompCor components equal nilearn's
// signal.high_variance_confounds up to each component's sign.
func TestHighVarianceConfoundsEqualsNilearn(t *testing.T) {
	dir := pyref.Nilearn(t)
	// 18 series selected: from their Gram matrix (60 volumes) and from the t×t matrix (12).
	for _, tt := range []int{60, 12} {
		checkHighVariance(t, dir, tt)
	}
}

func checkHighVariance(t *testing.T, dir string, tt int) {
	rng := rand.New(rand.NewPCG(7, 7))
	const n = 900
	x := make([]float32, n*tt)
	for i := 0; i < n; i++ {
		amp := 1 + 10*rng.Float64()*rng.Float64()
		for k := 0; k < tt; k++ {
			x[i*tt+k] = float32(500 + 0.1*float64(k) + amp*math.Sin(float64(k)*0.3+float64(i%5)) + rng.NormFloat64())
		}
	}
	ours, err := HighVarianceConfounds(x, n, tt, 5, 2)
	if err != nil {
		t.Fatal(err)
	}
	f := filepath.Join(t.TempDir(), "x")
	b := make([]byte, 8*len(x))
	for i := 0; i < n; i++ { // time along rows for nilearn
		for k := 0; k < tt; k++ {
			binary.LittleEndian.PutUint64(b[8*(k*n+i):], math.Float64bits(float64(x[i*tt+k])))
		}
	}
	if err := os.WriteFile(f, b, 0o600); err != nil {
		t.Fatal(err)
	}
	out := pyref.Run(t, `
import sys, json
sys.path.insert(0, sys.argv[1])
import numpy as np
from nilearn.signal import high_variance_confounds
x = np.fromfile(sys.argv[2]).reshape(int(sys.argv[3]), int(sys.argv[4]))
print(json.dumps(high_variance_confounds(x, n_confounds=5, percentile=2.0).T.tolist()))
`, dir, f, strconv.Itoa(tt), strconv.Itoa(n))
	var ref [][]float64
	if err := json.Unmarshal(out, &ref); err != nil {
		t.Fatal(err)
	}
	for j := range ref {
		s := 1.0
		if dotF(ours[j], ref[j]) < 0 {
			s = -1
		}
		for k := range ref[j] {
			if d := math.Abs(s*ours[j][k] - ref[j][k]); d > 1e-8 {
				t.Fatalf("component %d volume %d: %g, nilearn %g", j, k, s*ours[j][k], ref[j][k])
			}
		}
	}
}

// TestHighVarianceConfoundsTiedTop: when the highest mean squares tie (a tiny synthetic scan
// whose loudest series are copies) nothing lies above the 98th percentile; the tied series are
// the components' source (one direction: the shared series), and a scan of constant series
// is refused with what to do.
func TestHighVarianceConfoundsTiedTop(t *testing.T) {
	const n, tt = 40, 12
	x := make([]float32, n*tt)
	for i := 0; i < n; i++ {
		amp := 0.5 // quiet series, each its own frequency
		if i%10 == 0 {
			amp = 2 // the 4 loudest are one series
		}
		for k := 0; k < tt; k++ {
			x[i*tt+k] = float32(100 + float64(i) + amp*math.Sin(float64(k)*float64(1+i%10)*0.4))
		}
	}
	comps, err := HighVarianceConfounds(x, n, tt, 5, 2)
	if err != nil {
		t.Fatal(err)
	}
	if len(comps) != 1 {
		t.Fatalf("%d components, want 1 (the 4 tied series differ by float32 rounding alone)", len(comps))
	}
	// The component is the loud series, detrended and of unit norm, up to sign.
	want := make([]float64, tt)
	for k := range want {
		want[k] = math.Sin(float64(k) * 0.4)
	}
	dot, nw := 0.0, 0.0
	mean, slope, tc, ramp := 0.0, 0.0, float64(tt-1)/2, 0.0
	for k := range want {
		mean += want[k] / tt
		ramp += (float64(k) - tc) * (float64(k) - tc)
	}
	for k := range want {
		slope += (want[k] - mean) * (float64(k) - tc) / ramp
	}
	for k := range want {
		want[k] -= mean + slope*(float64(k)-tc)
		nw += want[k] * want[k]
		dot += want[k] * comps[0][k]
	}
	if c := math.Abs(dot) / math.Sqrt(nw); c < 1-1e-5 {
		t.Errorf("|cos| between the component and the loud series %.7f, want 1", c)
	}
	for i := range x {
		x[i] = float32(i / tt)
	}
	if _, err := HighVarianceConfounds(x, n, tt, 5, 2); err == nil || !strings.Contains(err.Error(), "--denoise none") {
		t.Errorf("constant series: %v, want a refusal that says --denoise none", err)
	}
}
