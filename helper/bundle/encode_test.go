package bundle

import (
	"bytes"
	"os"
	"path/filepath"
	"testing"

	"github.com/hubscope/hubscope/helper/network"
	"github.com/hubscope/hubscope/helper/npy"
)

// Files written by the exported encoders (per-window networks and factors of a dynamic
// analysis) read back through the bundle's own readers.
func TestEncodersRoundTrip(t *testing.T) {
	dir := t.TempDir()
	nw := randomNetwork(300, 0.05, 7)
	var b bytes.Buffer
	if err := EncodeNetworkNPZ(&b, nw); err != nil {
		t.Fatal(err)
	}
	p := filepath.Join(dir, "network_000.npz")
	if err := os.WriteFile(p, b.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	got, err := ReadNetwork(p)
	if err != nil {
		t.Fatal(err)
	}
	equalNetworks(t, "EncodeNetworkNPZ", got, nw)
	if err := EncodeNetworkNPZ(&bytes.Buffer{}, &network.Network{N: 2, Indptr: []uint64{0, 1}}); err == nil {
		t.Error("an invalid network was encoded")
	}

	const rows, cols = 5, 3
	b.Reset()
	if err := npy.WriteMatrix(&b, rows, cols, func(i int, dst []float32) {
		for k := range dst {
			dst[k] = float32(10*i + k)
		}
	}); err != nil {
		t.Fatal(err)
	}
	p = filepath.Join(dir, "factor.npy")
	if err := os.WriteFile(p, b.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	r, err := OpenSeries(p)
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	row := make([]float32, cols)
	if err := r.Row(3, row); err != nil {
		t.Fatal(err)
	}
	if r.N != rows || r.L != cols || row[0] != 30 || row[2] != 32 {
		t.Fatalf("read back %d×%d, row 3 = %v", r.N, r.L, row)
	}
}
