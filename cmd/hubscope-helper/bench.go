package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"strings"
	"time"

	"github.com/hubscope/hubscope/helper/benchmark"
	"github.com/hubscope/hubscope/helper/bundle"
	"github.com/hubscope/hubscope/helper/pipeline"
	"github.com/hubscope/hubscope/helper/progress"
	"github.com/hubscope/hubscope/ipc/schema"
)

func cmdBench(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := newFlags("bench", "bench [--workloads load,c1,c2,c6] [--peers DIR] [--repeat 3] [--json FILE]", stdout, stderr)
	work := fs.String("workloads", "", "comma-separated `LIST`: load, c1, c2, c4, c6 (CPU), w1…w6 (GPU; w6 = sliding-window DFC); default: load,c1,c2, or w1,w2,w4,w5 when a GPU works")
	peers := fs.String("peers", defaultPeers(), "`DIR` holding the peer pipelines (numpy_fc.py, igraph_metrics.py, torch_fc.py)")
	python := fs.String("python", defaultPython(), "Python interpreter `PROGRAM` for the peers")
	repeat := fs.Int("repeat", 3, "`N` timed repetitions after a warm-up (median reported)")
	backend := fs.String("backend", "auto", "backend `NAME` for the GPU workloads: auto, cpu or cuda")
	jsonOut := fs.String("json", "", "also write the rows as JSON to `FILE`")
	if _, err := parse(fs, args); err != nil {
		return err
	}
	gpu := pipeline.DeviceSummary()
	if *work == "" {
		*work = "load,c1,c2"
		if strings.HasPrefix(gpu, "cuda: NVIDIA") || strings.Contains(gpu, "compute capability") {
			*work = "w1,w2,w4,w5"
		}
	}
	h := bundle.ThisHost()
	fmt.Fprintf(stdout, "hubscope-helper %s bench, %s\ncpu: %s, %d logical CPUs\n%s\n\n",
		schema.Version, time.Now().UTC().Format("2006-01-02 15:04 UTC"), orUnknown(h.CPUModel), h.CPUs, gpu)
	var rows []benchmark.Row
	disp := progress.NewDisplay(stderr)
	err := benchmark.Run(ctx, benchmark.Options{Workloads: strings.Split(*work, ","), PeersDir: *peers,
		Python: *python, Repeat: *repeat, Backend: *backend}, disp, func(r benchmark.Row) {
		rows = append(rows, r)
		disp.Note(fmt.Sprintf("%s %s: ours %.3f s, peer %.3f s", r.Workload, r.Item, r.Ours, r.Peer))
	})
	disp.Close(err == nil)
	benchmark.WriteTable(stdout, rows)
	if *jsonOut != "" {
		b, _ := json.MarshalIndent(rows, "", "  ")
		if werr := os.WriteFile(*jsonOut, append(b, '\n'), 0o644); werr != nil && err == nil {
			err = werr
		}
	}
	return err
}

// defaultPeers finds ../shared/peers beside the repository (the layout every checkout and CI
// has), or $HUBSCOPE_PEERS.
func defaultPeers() string {
	if p := os.Getenv("HUBSCOPE_PEERS"); p != "" {
		return p
	}
	for _, p := range []string{"../shared/peers", "../../shared/peers", "shared/peers"} {
		if _, err := os.Stat(p); err == nil {
			return p
		}
	}
	return "../shared/peers"
}

// defaultPython prefers Debian's interpreter, where scripts/setup-deps.sh installs numpy,
// scipy, nibabel and igraph.
func defaultPython() string {
	if p := os.Getenv("HUBSCOPE_PYTHON"); p != "" {
		return p
	}
	if _, err := os.Stat("/usr/bin/python3"); err == nil {
		return "/usr/bin/python3"
	}
	return "python3"
}
