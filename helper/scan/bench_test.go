package scan

import (
	"context"
	"math"
	"path/filepath"
	"testing"

	"github.com/hubscope/hubscope/helper/nifti"
)

// benchScan writes a 64×64×36 EPI-like int16 run of L volumes (a bright ellipsoid "brain"
// with fluctuating signal on a dim noisy background) and a user mask of the ellipsoid.
func benchScan(b *testing.B, dir, ext string, L int) (scan, mask string) {
	b.Helper()
	dims := []int{64, 64, 36, L}
	G := 64 * 64 * 36
	inBrain := func(f int) bool {
		i, j, k := f%64, (f/64)%64, f/(64*64)
		x, y, z := (float64(i)-31.5)/28, (float64(j)-31.5)/30, (float64(k)-17.5)/16
		return x*x+y*y+z*z <= 1
	}
	data := make([]float32, G*L)
	seed := uint32(12345)
	for t := 0; t < L; t++ {
		for f := 0; f < G; f++ {
			seed = seed*1664525 + 1013904223 // LCG noise
			noise := float32(seed>>20) / 4096 * 20
			v := 30 + noise
			if inBrain(f) {
				v = 900 + noise + 40*float32(math.Sin(float64(t)*0.3+float64(f%97)))
			}
			data[t*G+f] = v
		}
	}
	scan = filepath.Join(dir, "bench"+ext)
	if err := nifti.WriteImage(scan, nifti.NewHeader(dims, nifti.Int16, testAffine, 2), data); err != nil {
		b.Fatal(err)
	}
	m := make([]float32, G)
	for f := range m {
		if inBrain(f) {
			m[f] = 1
		}
	}
	mask = filepath.Join(dir, "mask.nii.gz")
	if err := nifti.WriteImage(mask, nifti.NewHeader(dims[:3], nifti.Uint8, testAffine, 0), m); err != nil {
		b.Fatal(err)
	}
	return scan, mask
}

// BenchmarkLoad times Load on a generated 64×64×36×200 int16 run (59 MB of image data),
// plain and gzipped, with a user mask and with the automatic EPI mask (two passes). The
// MB/s column is decoded image bytes (Scan.BytesRead) per second.
func BenchmarkLoad(b *testing.B) {
	for _, ext := range []string{".nii", ".nii.gz"} {
		dir := b.TempDir()
		scan, mask := benchScan(b, dir, ext, 200)
		for _, c := range []struct {
			name string
			opt  Options
		}{{"user-mask", Options{MaskPath: mask}}, {"epi-mask", Options{}}} {
			b.Run(ext[1:]+"/"+c.name, func(b *testing.B) {
				var s *Scan
				b.ReportAllocs()
				for b.Loop() {
					var err error
					if s, err = Load(context.Background(), scan, c.opt, nil); err != nil {
						b.Fatal(err)
					}
				}
				b.SetBytes(s.BytesRead)
				b.ReportMetric(float64(s.N), "nodes")
				b.ReportMetric(float64(len(s.Data)*4)/1e6, "matrix-MB")
			})
		}
	}
}

// BenchmarkScatter compares writing gathered volumes into the voxel-major N×L matrix one
// volume at a time (column t of every row: one cache line per value) with the blocked
// scatter of scatterVolumes volumes that Load uses. N = 150,000 voxels, L = 200.
func BenchmarkScatter(b *testing.B) {
	const N, L = 150_000, 200
	data := make([]float32, N*L)
	vol := make([]float32, N)
	for i := range vol {
		vol[i] = float32(i)
	}
	b.Run("per-volume", func(b *testing.B) {
		b.SetBytes(N * L * 4)
		for b.Loop() {
			for t := 0; t < L; t++ {
				for v, x := range vol {
					data[v*L+t] = x
				}
			}
		}
	})
	b.Run("blocked", func(b *testing.B) {
		blk := make([]float32, scatterVolumes*N)
		b.SetBytes(N * L * 4)
		for b.Loop() {
			for t := 0; t < L; t++ {
				q := t % scatterVolumes
				copy(blk[q*N:(q+1)*N], vol)
				if q == scatterVolumes-1 || t == L-1 {
					scatterBlock(data, blk, N, L, t-q, q+1)
				}
			}
		}
	})
}
