package benchmark

import (
	"bytes"
	"context"
	"encoding/binary"
	"encoding/json"
	"fmt"
	"math"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"strings"

	"github.com/hubscope/hubscope/helper/denoise"
	"github.com/hubscope/hubscope/helper/progress"
	"github.com/hubscope/hubscope/helper/scratch"
)

// c4Peer times nilearn 0.10.4's signal.clean on the same float32 series and confounds
// (argv: nilearn dir, series file, confounds file, N, T, k, repeat, output file) and prints
// {"seconds": median}; it writes nilearn's float64 result for the first 2,000 series (time
// along rows) for the precision check.
const c4Peer = `
import json, sys, time, warnings
sys.path.insert(0, sys.argv[1])
import numpy as np
from nilearn import signal
warnings.simplefilter("ignore")
n, t, k, rep = (int(a) for a in sys.argv[4:8])
x = np.fromfile(sys.argv[2], dtype=np.float32).reshape(n, t).T.copy()
c = np.fromfile(sys.argv[3], dtype=np.float64).reshape(k, t).T.copy()
ts = []
for i in range(rep + 1):
    t0 = time.perf_counter()
    y = signal.clean(x, confounds=c, detrend=True, standardize="zscore_sample",
                     filter="butterworth", low_pass=0.08, high_pass=0.01, t_r=2.0)
    if i:
        ts.append(time.perf_counter() - t0)
# The precision check: nilearn in float64 on the first 2,000 series.
y = signal.clean(x[:, :2000].astype(np.float64), confounds=c, detrend=True, standardize="zscore_sample",
                 filter="butterworth", low_pass=0.08, high_pass=0.01, t_r=2.0)
np.asarray(y, dtype=np.float64).tofile(sys.argv[8])
print(json.dumps({"seconds": float(np.median(ts))}))
`

// C4Data is the C4 workload's input: n series of t volumes (row-major float32, BOLD-like:
// baseline, drift, shared slow fluctuation, noise) and k motion-like confounds.
func C4Data(n, t, k int) ([]float32, [][]float64) {
	rng := rand.New(rand.NewPCG(4, 58523))
	conf := make([][]float64, k)
	for j := range conf {
		conf[j] = make([]float64, t)
		v := 0.0
		for i := range conf[j] {
			v += 0.1 * rng.NormFloat64()
			conf[j][i] = v
		}
	}
	x := make([]float32, n*t)
	for i := 0; i < n; i++ {
		base, slope := 500+1000*rng.Float64(), 0.02*rng.NormFloat64()
		w := rng.NormFloat64()
		for k := 0; k < t; k++ {
			x[i*t+k] = float32(base + slope*float64(k) + 3*w*conf[i%len(conf)][k] + 5*math.Sin(0.12*float64(k)+float64(i%7)) + 2*rng.NormFloat64())
		}
	}
	return x, conf
}

// c4Options are C4's cleaning: linear detrend, Butterworth 0.01–0.08 Hz at TR 2 s, z-score.
var c4Options = denoise.Options{Detrend: true, Filter: denoise.FilterButterworth, HighPass: 0.01, LowPass: 0.08,
	TR: 2, Standardize: denoise.ZScoreSample, StandardizeConfounds: true}

// c4Workload: 58,523 voxels × 200 volumes, 27 confounds, beside nilearn's signal.clean in
// the same run; the note gives the largest difference from nilearn's output.
func c4Workload(ctx context.Context, o Options, rep progress.Reporter, emit func(Row)) error {
	const n, t, k = 58523, 200, 27
	x, conf := C4Data(n, t, k)
	y := make([]float32, n*t)
	ours, err := timeIt(o.Repeat, func() error {
		p, err := denoise.Compile(t, conf, nil, c4Options)
		if err != nil {
			return err
		}
		p.Apply(y, x, n)
		return ctx.Err()
	})
	if err != nil {
		return err
	}
	row := Row{Workload: "c4", Item: "denoise 58523×200, 27 confounds", Ours: ours}
	dir := o.TempDir
	if dir == "" {
		if dir, err = scratch.MkdirTemp("", "c4"); err != nil {
			return err
		}
		defer os.RemoveAll(dir)
	}
	xf, cf, yf := filepath.Join(dir, "x.f32"), filepath.Join(dir, "c.f64"), filepath.Join(dir, "y.f64")
	xb := make([]byte, 4*len(x))
	for i, v := range x {
		binary.LittleEndian.PutUint32(xb[4*i:], math.Float32bits(v))
	}
	cb := make([]byte, 0, 8*k*t)
	for _, c := range conf {
		for _, v := range c {
			cb = binary.LittleEndian.AppendUint64(cb, math.Float64bits(v))
		}
	}
	if err := os.WriteFile(xf, xb, 0o600); err != nil {
		return err
	}
	if err := os.WriteFile(cf, cb, 0o600); err != nil {
		return err
	}
	var out, errb bytes.Buffer
	cmd := exec.CommandContext(ctx, o.Python, "-c", c4Peer, filepath.Join(o.PeersDir, "nilearn"), xf, cf,
		fmt.Sprint(n), fmt.Sprint(t), fmt.Sprint(k), fmt.Sprint(o.Repeat), yf)
	cmd.Stdout, cmd.Stderr = &out, &errb
	if err := cmd.Run(); err != nil {
		row.Note = fmt.Sprintf("peer nilearn: %v: %s", err, lastLines(strings.TrimSpace(errb.String()), 3))
		emit(row)
		return nil
	}
	var pv struct{ Seconds float64 }
	if err := json.Unmarshal([]byte(lastLines(strings.TrimSpace(out.String()), 1)), &pv); err != nil {
		return fmt.Errorf("peer nilearn: unreadable output %q", out.String())
	}
	secs := pv.Seconds
	yb, err := os.ReadFile(yf)
	if err != nil {
		return err
	}
	worst := 0.0
	const m = 2000
	for i := 0; i < m; i++ {
		for kk := 0; kk < t; kk++ {
			ref := math.Float64frombits(binary.LittleEndian.Uint64(yb[8*(kk*m+i):]))
			worst = math.Max(worst, math.Abs(float64(y[i*t+kk])-ref))
		}
	}
	row.Peer, row.PeerName, row.Ratio = secs, "nilearn", ratio(ours, secs)
	row.Note = fmt.Sprintf("max |ours − nilearn float64| %.2g (z-scores, first 2,000 series)", worst)
	emit(row)
	return nil
}
