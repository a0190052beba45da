package benchmark

import (
	"context"
	"fmt"
	"os"
	"path/filepath"

	"github.com/hubscope/hubscope/helper/dfc"
	"github.com/hubscope/hubscope/helper/fc"
	"github.com/hubscope/hubscope/helper/pipeline"
	"github.com/hubscope/hubscope/helper/progress"
	"github.com/hubscope/hubscope/helper/scratch"
)

// dfcSpec is a sliding-window workload: N series of T volumes, windows of w every s, r > thr.
type dfcSpec struct {
	n, t, w, s int
	r          float64
}

var (
	// W6 (BENCHMARKS.md): GPU-DFC's ADHD-200 size, N=30,000, T=257, w=150, s=1 → 108 windows.
	w6 = dfcSpec{30000, 257, 150, 1, 0.3}
	// C6: W6 scaled to the 2-core development machine (N=5,000), same windows.
	c6 = dfcSpec{5000, 257, 150, 1, 0.3}
)

// dfcWorkload times dfc.Run (every window: gather, normalise, block products, r > thr, CSR,
// plus per-window degrees, C_p and components; no modularity) on BenchData, one warm-up and
// o.Repeat timed runs, beside the peer: torch_fc.py --window on a GPU (w6), an inline numpy
// version of the same loop on the CPU (c6).
func dfcWorkload(ctx context.Context, id string, o Options, rep progress.Reporter, emit func(Row)) error {
	spec, backend := c6, "cpu"
	if id == "w6" {
		spec, backend = w6, o.gpuBackend()
	}
	be, err := pipeline.OpenBackend(backend, rep)
	if err != nil {
		return err
	}
	defer be.Close()
	x := fc.BenchData(spec.n, spec.t, fc.BenchSeed)
	opt := dfc.Options{Window: spec.w, Step: spec.s, FC: fc.Config{Measure: fc.Pearson, Mode: fc.Strength, Threshold: spec.r}}
	var res *dfc.Result
	secs, err := timeIt(o.Repeat, func() error {
		var err error
		res, err = dfc.Run(ctx, be, x, spec.n, spec.t, opt, rep, nil)
		return err
	})
	if err != nil {
		return err
	}
	var edges int64
	for _, w := range res.Windows {
		edges += w.Measures.Edges
	}
	k := len(res.Windows)
	// Each window: 2·w·N(N−1)/2 flops of block products.
	gflops := float64(k) * float64(spec.w) * float64(spec.n) * float64(spec.n-1) / secs / 1e9
	row := Row{Workload: id, Item: fmt.Sprintf("DFC N=%d T=%d w=%d s=%d r>%g", spec.n, spec.t, spec.w, spec.s, spec.r), Ours: secs,
		Note: fmt.Sprintf("%s; %d windows, %d edges in all; %.1f GFLOP/s", be.Device(), k, edges, gflops)}
	args := []string{"--n", fmt.Sprint(spec.n), "--l", fmt.Sprint(spec.t), "--window", fmt.Sprint(spec.w),
		"--step", fmt.Sprint(spec.s), "--r", fmt.Sprint(spec.r), "--repeat", fmt.Sprint(o.Repeat)}
	var pv map[string]any
	var perr error
	name := "torch"
	if id == "w6" {
		pv, perr = peer(ctx, o, "torch_fc.py", args...)
	} else {
		name = "numpy"
		pv, perr = peerNumpyDFC(ctx, o, args...)
	}
	if perr != nil {
		row.Note += "; " + perr.Error()
	} else {
		row.Peer, row.PeerName = num(pv["seconds"]), name
		row.Ratio = ratio(row.Ours, row.Peer)
		row.Note += fmt.Sprintf("; peer %v edges", pv["edges"])
	}
	emit(row)
	return nil
}

// numpyDFC is torch_fc.py's dfc_run written with numpy (numpy_fc.py has no window mode): per
// window, normalise the window's rows, then numpy_fc.py's block loop (2048-row panels of
// U_I U_Jᵀ, strict upper triangle, r > thr, edges gathered into host arrays).
const numpyDFC = `
import argparse, json, time, statistics
import numpy as np
p = argparse.ArgumentParser()
for k in ("--n", "--l", "--window", "--step", "--repeat"):
    p.add_argument(k, type=int)
p.add_argument("--r", type=float)
p.add_argument("--block", type=int, default=2048)
p.add_argument("--npy")
a = p.parse_args()
X0 = np.load(a.npy).astype(np.float32) if a.npy else \
    np.random.default_rng(0).standard_normal((a.n, a.l), dtype=np.float32)
N = X0.shape[0]

def emit(U):
    e = 0
    out = []
    for i in range(0, N, a.block):
        R = np.triu(U[i:i + a.block] @ U[i:].T, 1)
        ii, jj = np.nonzero(R > a.r)
        out.append((ii + i, jj + i, R[ii, jj]))
        e += ii.size
    return e

def run():
    total = 0
    for s in range(0, a.l - a.window + 1, a.step):
        U = X0[:, s:s + a.window]
        U = U - U.mean(1, keepdims=True)
        U /= np.linalg.norm(U, axis=1, keepdims=True)
        total += emit(U)
    return total

run()
ts = []
for _ in range(a.repeat):
    t0 = time.perf_counter()
    e = run()
    ts.append(time.perf_counter() - t0)
print(json.dumps({"peer": "numpy", "seconds": statistics.median(ts), "edges": e}))
`

func peerNumpyDFC(ctx context.Context, o Options, args ...string) (map[string]any, error) {
	f, err := scratch.CreateTemp(o.TempDir, "numpy-dfc", ".py")
	if err != nil {
		return nil, err
	}
	defer os.Remove(f.Name())
	if _, err := f.WriteString(numpyDFC); err != nil {
		f.Close()
		return nil, err
	}
	if err := f.Close(); err != nil {
		return nil, err
	}
	return peer(ctx, Options{PeersDir: filepath.Dir(f.Name()), Python: o.Python}, filepath.Base(f.Name()), args...)
}
