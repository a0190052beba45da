package benchmark

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/hubscope/hubscope/helper/internal/pyref"
)

// TestPeerOutput runs a peer script through the same path as the real peers and reads the
// JSON object it prints last, ignoring what comes before; a failing peer's stderr is reported.
func TestPeerOutput(t *testing.T) {
	pyref.Require(t, "json")
	dir := t.TempDir()
	os.WriteFile(filepath.Join(dir, "ok.py"), []byte(`import json, sys
print("warming up")
print(json.dumps({"seconds": 1.25, "argv": sys.argv[1:], "clustering_avglocal": {"s": 0.5, "v": 0.3}}))
`), 0o644)
	os.WriteFile(filepath.Join(dir, "bad.py"), []byte("import sys\nsys.stderr.write('out of memory\\n'); sys.exit(3)\n"), 0o644)
	o := Options{PeersDir: dir, Python: pyref.Python()}
	v, err := peer(context.Background(), o, "ok.py", "--n", "5")
	if err != nil {
		t.Fatal(err)
	}
	if num(v["seconds"]) != 1.25 || num(v["clustering_avglocal"]) != 0.5 {
		t.Fatalf("decoded %v", v)
	}
	if _, err := peer(context.Background(), o, "bad.py"); err == nil || !strings.Contains(err.Error(), "out of memory") {
		t.Fatalf("failing peer: %v", err)
	}
	if _, err := peer(context.Background(), o, "missing.py"); err == nil || !strings.Contains(err.Error(), "--peers") {
		t.Fatalf("missing peer: %v", err)
	}
}

func TestTableAndMedian(t *testing.T) {
	if m := median([]float64{3, 1, 2}); m != 2 {
		t.Fatalf("median %v", m)
	}
	var b bytes.Buffer
	WriteTable(&b, []Row{{Workload: "c1", Item: "pearson", Ours: 1, Peer: 4, PeerName: "numpy", Ratio: 0.25},
		{Workload: "w3", Item: "pearson 1e6", Ours: 9}})
	out := b.String()
	if !strings.Contains(out, "0.250") || !strings.Contains(out, "4.000") || strings.Count(out, "\n") != 3 {
		t.Fatalf("table:\n%s", out)
	}
	if !strings.Contains(strings.Split(out, "\n")[2], " - ") {
		t.Fatalf("a row without a peer must show '-':\n%s", out)
	}
	if err := Run(context.Background(), Options{Workloads: []string{"c9"}}, nil, func(Row) {}); err == nil || !strings.Contains(err.Error(), "unknown workload") {
		t.Fatalf("unknown workload: %v", err)
	}
}
