// Package benchmark runs HubScope's benchmark workloads (BENCHMARKS.md) side
// by side with their peer pipelines in the same run, and reports both times and their ratio.
//
//	load  load + mask of a 200,000-voxel × 200-volume phantom (int16/float32, .nii/.nii.gz)
//	      beside nibabel
//	c1    Pearson N=20,000, L=200, density 1 % on the CPU beside numpy_fc.py (OpenBLAS)
//	c2    graph metrics of the 10,000-node, 1 %-density network beside igraph_metrics.py
//	w1…w5 GPU network construction beside torch_fc.py (needs the cuda build and a GPU)
//	w6    sliding-window DFC, N=30,000, T=257, w=150, s=1, r > 0.3, beside torch_fc.py --window
//	c4    denoising 58,523 voxels × 200 volumes (detrend, Butterworth 0.01–0.08 Hz at TR 2 s,
//	      27 confounds, z-score) beside nilearn's signal.clean
//	c6    the same windows at N=5,000 on the CPU beside numpy
package benchmark

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"time"

	"github.com/hubscope/hubscope/helper/progress"
)

// Row is one measured line: our time, the peer's, and ours/peer.
type Row struct {
	Workload string  `json:"workload"`
	Item     string  `json:"item"`
	Ours     float64 `json:"ours_s"`
	Peer     float64 `json:"peer_s,omitempty"` // 0: no peer figure
	PeerName string  `json:"peer,omitempty"`
	Ratio    float64 `json:"ratio,omitempty"`
	Note     string  `json:"note,omitempty"`
}

// Options set up a benchmark run.
type Options struct {
	Workloads []string
	PeersDir  string // directory of numpy_fc.py, igraph_metrics.py, torch_fc.py
	Python    string // interpreter for the peers
	Repeat    int    // timed repetitions (median reported), after one warm-up
	Backend   string // for c1 and the GPU workloads: cpu or cuda
	TempDir   string
}

// Run runs the workloads in order, calling emit for each row as it is measured.
func Run(ctx context.Context, o Options, rep progress.Reporter, emit func(Row)) error {
	if o.Repeat < 1 {
		o.Repeat = 3
	}
	for _, w := range o.Workloads {
		var err error
		switch strings.ToLower(w) {
		case "load":
			err = loadWorkload(ctx, o, rep, emit)
		case "c1":
			err = c1Workload(ctx, o, rep, emit)
		case "c2":
			err = c2Workload(ctx, o, rep, emit)
		case "w1", "w2", "w3", "w4", "w5":
			err = gpuWorkload(ctx, strings.ToLower(w), o, rep, emit)
		case "w6", "c6":
			err = dfcWorkload(ctx, strings.ToLower(w), o, rep, emit)
		case "c4":
			err = c4Workload(ctx, o, rep, emit)
		default:
			return fmt.Errorf("unknown workload %q (want load, c1, c2, c4, c6, w1…w6)", w)
		}
		if err != nil {
			return fmt.Errorf("%s: %w", w, err)
		}
	}
	return nil
}

// peer runs a peer script and decodes the JSON object it prints last.
func peer(ctx context.Context, o Options, script string, args ...string) (map[string]any, error) {
	path := filepath.Join(o.PeersDir, script)
	if _, err := os.Stat(path); err != nil {
		return nil, fmt.Errorf("peer %s: %w (set --peers)", script, err)
	}
	var out, errb bytes.Buffer
	cmd := exec.CommandContext(ctx, o.Python, append([]string{path}, args...)...)
	cmd.Stdout, cmd.Stderr = &out, &errb
	if err := cmd.Run(); err != nil {
		return nil, fmt.Errorf("peer %s: %v: %s", script, err, strings.TrimSpace(lastLines(errb.String(), 5)))
	}
	lines := strings.Split(strings.TrimSpace(out.String()), "\n")
	var v map[string]any
	if err := json.Unmarshal([]byte(lines[len(lines)-1]), &v); err != nil {
		return nil, fmt.Errorf("peer %s: unreadable output %q", script, lines[len(lines)-1])
	}
	return v, nil
}

func lastLines(s string, n int) string {
	l := strings.Split(s, "\n")
	if len(l) > n {
		l = l[len(l)-n:]
	}
	return strings.Join(l, "\n")
}

func num(v any) float64 {
	switch x := v.(type) {
	case float64:
		return x
	case map[string]any:
		return num(x["s"])
	}
	return 0
}

func ratio(ours, peer float64) float64 {
	if peer <= 0 {
		return 0
	}
	return ours / peer
}

func median(xs []float64) float64 {
	s := append([]float64(nil), xs...)
	for i := range s {
		for j := i + 1; j < len(s); j++ {
			if s[j] < s[i] {
				s[i], s[j] = s[j], s[i]
			}
		}
	}
	return s[len(s)/2]
}

// timeIt runs f once to warm up, then repeat times, and returns the median wall time.
func timeIt(repeat int, f func() error) (float64, error) {
	var ts []float64
	for i := -1; i < repeat; i++ {
		t0 := time.Now()
		if err := f(); err != nil {
			return 0, err
		}
		if i >= 0 {
			ts = append(ts, time.Since(t0).Seconds())
		}
	}
	return median(ts), nil
}

// WriteTable prints rows as an aligned table.
func WriteTable(w io.Writer, rows []Row) {
	fmt.Fprintf(w, "%-8s %-34s %10s %10s %-8s %7s  %s\n", "workload", "item", "ours (s)", "peer (s)", "peer", "ratio", "note")
	for _, r := range rows {
		peer, rat := "-", "-"
		if r.Peer > 0 {
			peer, rat = fmt.Sprintf("%.3f", r.Peer), fmt.Sprintf("%.3f", r.Ratio)
		}
		fmt.Fprintf(w, "%-8s %-34s %10.3f %10s %-8s %7s  %s\n", r.Workload, r.Item, r.Ours, peer, r.PeerName, rat, r.Note)
	}
}
