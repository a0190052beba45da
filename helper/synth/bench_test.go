package synth

import (
	"context"
	"os"
	"path/filepath"
	"testing"
)

// BenchmarkWrite streams the default phantom (200 volumes, int16, gzip) on the 4 mm demo mask
// (28,971 voxels). go test -run '^$' -bench Write ./helper/synth
func BenchmarkWrite(b *testing.B) {
	m, a, err := DemoMask()
	if err != nil {
		b.Fatal(err)
	}
	benchWrite(b, m.Count(), func(out string) error {
		_, err := Write(context.Background(), m, a, DefaultParams(), out, nil)
		return err
	})
}

// BenchmarkWriteGreyMatter1mm streams the default phantom on the 1 mm grey-matter mask
// (1,524,955 voxels on a 197×233×189 grid): the 10⁶-voxel benchmark input.
// go test -run '^$' -bench GreyMatter1mm -benchtime 1x ./helper/synth
func BenchmarkWriteGreyMatter1mm(b *testing.B) {
	if _, err := os.Stat(gm1mm); err != nil {
		b.Skipf("grey-matter map not present: %v", err)
	}
	m, a, err := GreyMatterMask(gm1mm, 0.2)
	if err != nil {
		b.Fatal(err)
	}
	benchWrite(b, m.Count(), func(out string) error {
		_, err := Write(context.Background(), m, a, DefaultParams(), out, nil)
		return err
	})
}

// BenchmarkGenerate times the generator alone, in memory, on the demo mask.
func BenchmarkGenerate(b *testing.B) {
	m, a, err := DemoMask()
	if err != nil {
		b.Fatal(err)
	}
	p := DefaultParams()
	b.ResetTimer()
	for b.Loop() {
		if _, _, err := Generate(m, a, p); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(m.Count()*p.Length)*float64(b.N)/b.Elapsed().Seconds()/1e6, "Mvoxel-volumes/s")
}

func benchWrite(b *testing.B, voxels int, write func(out string) error) {
	dir := b.TempDir()
	out := filepath.Join(dir, "phantom.nii.gz")
	var size int64
	b.ResetTimer()
	for b.Loop() {
		if err := write(out); err != nil {
			b.Fatal(err)
		}
		fi, err := os.Stat(out)
		if err != nil {
			b.Fatal(err)
		}
		size = fi.Size()
	}
	sec := b.Elapsed().Seconds() / float64(b.N)
	b.ReportMetric(float64(voxels*DefaultParams().Length)/sec/1e6, "Mvoxel-volumes/s")
	b.ReportMetric(float64(size)/1e6, "MB-file")
}
