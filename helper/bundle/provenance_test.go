package bundle

import (
	"math/rand/v2"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/hubscope/hubscope/helper/internal/pyref"
)

func TestSHA256FileMatchesHashlib(t *testing.T) {
	pyref.Require(t, "hashlib")
	dir := t.TempDir()
	rng := rand.New(rand.NewPCG(1, 2))
	sizes := []int{0, 1, 55, 64, 1 << 20, 3<<20 + 17}
	var paths []string
	for _, n := range sizes {
		b := make([]byte, n)
		for i := range b {
			b[i] = byte(rng.Uint32())
		}
		p := filepath.Join(dir, strings.Repeat("x", 1+len(paths)))
		if err := os.WriteFile(p, b, 0o644); err != nil {
			t.Fatal(err)
		}
		paths = append(paths, p)
	}
	want := strings.Fields(string(pyref.Run(t, `
import hashlib, sys
for p in sys.argv[1:]:
    print(hashlib.sha256(open(p, 'rb').read()).hexdigest())
`, paths...)))
	for i, p := range paths {
		got, err := SHA256File(p)
		if err != nil {
			t.Fatal(err)
		}
		if got != want[i] {
			t.Errorf("%d bytes: %s, hashlib %s", sizes[i], got, want[i])
		}
	}
	if _, err := SHA256File(filepath.Join(dir, "missing")); err == nil || !strings.Contains(err.Error(), "missing") {
		t.Errorf("missing file: %v", err)
	}
}

func TestCPUModel(t *testing.T) {
	dir := t.TempDir()
	x86 := "processor\t: 0\nvendor_id\t: AuthenticAMD\nmodel name\t: AMD EPYC 9654 96-Core Processor\nflags\t\t: fpu\n\nprocessor\t: 1\nmodel name\t: AMD EPYC 9654 96-Core Processor\n"
	arm := "processor\t: 0\nBogoMIPS\t: 48.00\n\nHardware\t: BCM2835\nModel\t\t: Raspberry Pi 4 Model B Rev 1.4\n"
	for name, c := range map[string]struct{ text, want string }{
		"x86": {x86, "AMD EPYC 9654 96-Core Processor"},
		"arm": {arm, "BCM2835"},
		"bad": {"nothing here\n", ""},
	} {
		p := filepath.Join(dir, name)
		os.WriteFile(p, []byte(c.text), 0o644)
		if got := cpuModel(p); got != c.want {
			t.Errorf("%s: %q, want %q", name, got, c.want)
		}
	}
	if got := cpuModel(filepath.Join(dir, "none")); got != "" {
		t.Errorf("missing cpuinfo: %q", got)
	}
	h := ThisHost()
	if h.OS != runtime.GOOS || h.CPUs < 1 || !strings.HasPrefix(h.GoVersion, "go") {
		t.Errorf("ThisHost = %+v", h)
	}
	if runtime.GOOS == "linux" && h.CPUModel == "" {
		if b, err := os.ReadFile("/proc/cpuinfo"); err == nil && strings.Contains(string(b), "model name") {
			t.Errorf("ThisHost found no CPU model in /proc/cpuinfo")
		}
	}
}

func TestProvenanceJSON(t *testing.T) {
	dir := t.TempDir()
	in := filepath.Join(dir, "scan.nii.gz")
	os.WriteFile(in, []byte("abc"), 0o644)
	inp, err := DescribeInput(in)
	if err != nil {
		t.Fatal(err)
	}
	// SHA-256("abc") from FIPS 180-2, appendix B.1.
	if inp.Bytes != 3 || inp.SHA256 != "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad" {
		t.Fatalf("DescribeInput = %+v", inp)
	}
	w, err := Create(filepath.Join(dir, "out"), false)
	if err != nil {
		t.Fatal(err)
	}
	p := Provenance{Software: "HubScope", Version: "0.1.0", Created: time.Date(2026, 11, 22, 3, 4, 5, 0, time.UTC),
		Input: inp, Parameters: struct {
			Measure string  `json:"measure"`
			Density float64 `json:"density"`
		}{"pearson", 0.01}, Backend: "cpu", Host: Host{OS: "linux", Arch: "amd64", CPUs: 2, GoVersion: "go1.26"},
		Timings: []StageTiming{{Stage: "load", Seconds: 1.5}, {Stage: "correlate", Seconds: 0.25}}}
	if err := w.WriteJSON("provenance.json", p); err != nil {
		t.Fatal(err)
	}
	out, err := w.Commit()
	if err != nil {
		t.Fatal(err)
	}
	b, _ := os.ReadFile(filepath.Join(out, "provenance.json"))
	for _, want := range []string{`"created": "2026-11-22T03:04:05Z"`, `"sha256": "ba7816bf`, `"density": 0.01`,
		`"stage": "correlate"`, `"device": ""`} {
		if !strings.Contains(string(b), want) {
			t.Errorf("provenance.json lacks %s:\n%s", want, b)
		}
	}
	if strings.Index(string(b), `"load"`) > strings.Index(string(b), `"correlate"`) {
		t.Error("stage timings out of order")
	}
}
