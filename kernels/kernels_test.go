package kernels

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"testing"
)

// sourceManifestHash recomputes SourceSHA256 the way generate.sh does: the sha256 of the
// `sha256sum` listing ("<hex>  <name>\n" per file) of *.cu and *.cuh sorted by name.
func sourceManifestHash(dir string) (string, []string, error) {
	var names []string
	for _, pattern := range []string{"*.cu", "*.cuh"} {
		m, err := filepath.Glob(filepath.Join(dir, pattern))
		if err != nil {
			return "", nil, err
		}
		for _, p := range m {
			names = append(names, filepath.Base(p))
		}
	}
	sort.Strings(names)
	var listing bytes.Buffer
	for _, name := range names {
		b, err := os.ReadFile(filepath.Join(dir, name))
		if err != nil {
			return "", nil, err
		}
		sum := sha256.Sum256(b)
		fmt.Fprintf(&listing, "%s  %s\n", hex.EncodeToString(sum[:]), name)
	}
	sum := sha256.Sum256(listing.Bytes())
	return hex.EncodeToString(sum[:]), names, nil
}

// TestFatbinMatchesSources fails when a kernel source changed (or was added or removed)
// without `go generate ./kernels` rebuilding the fatbin, or when the fatbin was replaced by
// hand: CI has no nvcc, so this is how it notices stale device code.
func TestFatbinMatchesSources(t *testing.T) {
	got, names, err := sourceManifestHash(".")
	if err != nil {
		t.Fatal(err)
	}
	if len(names) == 0 {
		t.Fatal("no kernel sources (*.cu, *.cuh) found in kernels/")
	}
	if got != SourceSHA256 {
		t.Errorf("kernel sources %v hash to %s but hubscope.fatbin was generated from %s: run `go generate ./kernels` (nvcc ≥ 11.8) and commit the result", names, got, SourceSHA256)
	}
	sum := sha256.Sum256(Fatbin)
	if h := hex.EncodeToString(sum[:]); h != FatbinSHA256 {
		t.Errorf("embedded hubscope.fatbin hashes to %s, generate.sh recorded %s: the fatbin was changed outside go generate", h, FatbinSHA256)
	}
}

// TestManifestHashDetectsEdits checks that the staleness check can fail: editing one byte of
// a copied source changes the manifest hash.
func TestManifestHashDetectsEdits(t *testing.T) {
	dir := t.TempDir()
	_, names, err := sourceManifestHash(".")
	if err != nil {
		t.Fatal(err)
	}
	for _, name := range names {
		b, err := os.ReadFile(name)
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, name), b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	same, _, err := sourceManifestHash(dir)
	if err != nil {
		t.Fatal(err)
	}
	if same != SourceSHA256 {
		t.Fatalf("copied sources hash to %s, want %s", same, SourceSHA256)
	}
	p := filepath.Join(dir, names[0])
	b, _ := os.ReadFile(p)
	b = append(b, '\n')
	if err := os.WriteFile(p, b, 0o644); err != nil {
		t.Fatal(err)
	}
	edited, _, err := sourceManifestHash(dir)
	if err != nil {
		t.Fatal(err)
	}
	if edited == SourceSHA256 {
		t.Fatalf("appending a newline to %s left the manifest hash unchanged", names[0])
	}
}

// TestFatbinHeader checks that the embedded module is a CUDA fatbin (magic 0xBA55ED50) that
// names the kernels the backend looks up.
func TestFatbinHeader(t *testing.T) {
	if len(Fatbin) < 16 {
		t.Fatalf("fatbin has %d bytes", len(Fatbin))
	}
	if magic := uint32(Fatbin[0]) | uint32(Fatbin[1])<<8 | uint32(Fatbin[2])<<16 | uint32(Fatbin[3])<<24; magic != 0xBA55ED50 {
		t.Fatalf("fatbin magic %#x, want 0xba55ed50", magic)
	}
	for _, name := range []string{NormalizeRows, AverageRanks, KendallSigns, CorrelationEdges, CorrelationHistogram, KendallEdges, KendallHistogram, CorrelationValues, KendallValues, TopKSelect, CheckSeries, CorrelationRows, PanelDegrees, PanelScan, PanelGather, SplitTF32, KeysHistogram, PanelTrim, PanelCompact, ComponentsInit, ComponentsHook, ComponentsFlatten, GroupEdges, GroupHistogram, GroupValues} {
		if !bytes.Contains(Fatbin, []byte(name)) {
			t.Errorf("fatbin does not mention kernel %q", name)
		}
	}
}
