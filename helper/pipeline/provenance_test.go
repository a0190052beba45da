package pipeline

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"os"
	"path/filepath"
	"testing"

	"github.com/hubscope/hubscope/helper/bundle"
	"github.com/hubscope/hubscope/ipc/settings"
)

// TestProvenanceUsesLoadDigests checks that provenance.json records the scan's and the mask's
// SHA-256 and size exactly as sha256sum would (the same values DescribeInput gave before)
// and that they come from the load: the files are not read again for provenance.
func TestProvenanceUsesLoadDigests(t *testing.T) {
	scanPath, maskPath, _ := phantom(t, 6)
	defer func(f func(string) (bundle.Input, error)) { describeInput = f }(describeInput)
	describeInput = func(p string) (bundle.Input, error) {
		t.Errorf("provenance read %s again", p)
		return bundle.DescribeInput(p)
	}
	cfg := Defaults()
	cfg.Scan, cfg.Mask, cfg.Out = scanPath, maskPath, filepath.Join(t.TempDir(), "out")
	cfg.Backend, cfg.Metrics = "cpu", settings.MetricsBasic
	res, err := Run(context.Background(), cfg, nil)
	if err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(filepath.Join(res.Dir, "provenance.json"))
	if err != nil {
		t.Fatal(err)
	}
	var p bundle.Provenance
	if err := json.Unmarshal(b, &p); err != nil {
		t.Fatal(err)
	}
	sum := func(path string) string {
		raw, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		s := sha256.Sum256(raw)
		return hex.EncodeToString(s[:])
	}
	want, err := bundle.DescribeInput(scanPath) // what provenance recorded before
	if err != nil {
		t.Fatal(err)
	}
	if p.Input != want || p.Input.SHA256 != sum(scanPath) {
		t.Errorf("input = %+v, want %+v", p.Input, want)
	}
	note := "mask " + maskPath + " sha256 " + sum(maskPath)
	found := false
	for _, n := range p.Notes {
		found = found || n == note
	}
	if !found {
		t.Errorf("notes %q lack %q", p.Notes, note)
	}
}

// TestProvenanceFallsBackToDescribeInput checks that an input the load did not digest is
// still hashed.
func TestProvenanceFallsBackToDescribeInput(t *testing.T) {
	p := filepath.Join(t.TempDir(), "x.csv")
	if err := os.WriteFile(p, []byte("abc"), 0o644); err != nil {
		t.Fatal(err)
	}
	in, err := inputOf(p, nil)
	if err != nil || in.Bytes != 3 || in.SHA256 != "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad" {
		t.Fatalf("inputOf = %+v, %v", in, err)
	}
}
