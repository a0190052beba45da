package benchmark

import (
	"bytes"
	"context"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"testing"

	"github.com/hubscope/hubscope/helper/backend/cpu"
	"github.com/hubscope/hubscope/helper/dfc"
	"github.com/hubscope/hubscope/helper/fc"
	"github.com/hubscope/hubscope/helper/internal/pyref"
	"github.com/hubscope/hubscope/helper/npy"
)

// The inline numpy DFC peer does the work dfc.Run does: on the same series it finds the same
// number of edges over all windows (up to pairs within float32 rounding of the threshold).
func TestNumpyDFCPeerMatchesOurs(t *testing.T) {
	pyref.Require(t, "numpy")
	const n, T, w, s, r = 300, 40, 20, 5, 0.3
	x := fc.BenchData(n, T, 5)
	var b bytes.Buffer
	if err := npy.WriteMatrix(&b, n, T, func(i int, dst []float32) { copy(dst, x[i*T:]) }); err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(t.TempDir(), "x.npy")
	if err := os.WriteFile(path, b.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	pv, err := peerNumpyDFC(context.Background(), Options{Python: pyref.Python(), TempDir: t.TempDir()},
		"--npy", path, "--n", "0", "--l", fmt.Sprint(T), "--window", fmt.Sprint(w), "--step", fmt.Sprint(s), "--r", fmt.Sprint(r), "--repeat", "1")
	if err != nil {
		t.Fatal(err)
	}
	be := cpu.New(cpu.Options{})
	defer be.Close()
	res, err := dfc.Run(context.Background(), be, x, n, T, dfc.Options{Window: w, Step: s, FC: fc.Config{Mode: fc.Strength, Threshold: r}}, nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	var ours int64
	for _, win := range res.Windows {
		ours += win.Measures.Edges
	}
	theirs := int64(num(pv["edges"]))
	if ours == 0 || math.Abs(float64(ours-theirs)) > 2+0.001*float64(ours) {
		t.Fatalf("edges over %d windows: ours %d, numpy peer %d", len(res.Windows), ours, theirs)
	}
}
