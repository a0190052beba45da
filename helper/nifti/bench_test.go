package nifti

import (
	"encoding/binary"
	"io"
	"math"
	"math/rand/v2"
	"path/filepath"
	"testing"
)

// benchImage writes a 64×64×40×25 series shaped like a BOLD scan: an ellipsoidal "brain" of
// values around 1000 with 2 % noise, zeros outside, so gzip sees fMRI-like redundancy.
func benchImage(b *testing.B, dt DataType, name string) (string, int64) {
	b.Helper()
	const nx, ny, nz, nt = 64, 64, 40, 25
	h := NewHeader([]int{nx, ny, nz, nt}, dt, testAffine(), 2)
	path := filepath.Join(b.TempDir(), name)
	w, err := Create(path, h)
	if err != nil {
		b.Fatal(err)
	}
	rng := rand.New(rand.NewPCG(9, 9))
	vol := make([]float32, nx*ny*nz)
	for range nt {
		for k := range nz {
			for j := range ny {
				for i := range nx {
					x, y, z := float64(i)/nx-0.5, float64(j)/ny-0.5, float64(k)/nz-0.5
					v := 0.0
					if x*x+y*y+z*z < 0.2 {
						v = 1000 + 20*rng.NormFloat64()
						if dt == Float32 {
							v = math.Round(v*100) / 100
						}
					}
					vol[(k*ny+j)*nx+i] = float32(v)
				}
			}
		}
		if err := w.WriteVolume(vol); err != nil {
			b.Fatal(err)
		}
	}
	if err := w.Close(); err != nil {
		b.Fatal(err)
	}
	return path, int64(nx * ny * nz * nt * dt.Size())
}

// BenchmarkReadVolumes streams every volume of a 64×64×40×25 image; MB/s is of raw
// (decompressed) voxel data.
func BenchmarkReadVolumes(b *testing.B) {
	for _, dt := range []DataType{Int16, Float32} {
		for _, ext := range []string{".nii", ".nii.gz"} {
			b.Run(dt.String()+ext, func(b *testing.B) {
				path, n := benchImage(b, dt, "bench"+ext)
				b.SetBytes(n)
				b.ResetTimer()
				for range b.N {
					r, err := Open(path)
					if err != nil {
						b.Fatal(err)
					}
					vol := make([]float32, r.Header.VoxelsPerVolume())
					for {
						if err := r.ReadVolume(vol); err == io.EOF {
							break
						} else if err != nil {
							b.Fatal(err)
						}
					}
					r.Close()
				}
			})
		}
	}
}

// BenchmarkWriteVolumes writes the same image; MB/s is of raw voxel data.
func BenchmarkWriteVolumes(b *testing.B) {
	for _, dt := range []DataType{Int16, Float32} {
		for _, ext := range []string{".nii", ".nii.gz"} {
			b.Run(dt.String()+ext, func(b *testing.B) {
				path, n := benchImage(b, dt, "src"+ext)
				h, data, err := ReadImage(path)
				if err != nil {
					b.Fatal(err)
				}
				out := filepath.Join(b.TempDir(), "out"+ext)
				b.SetBytes(n)
				b.ResetTimer()
				for range b.N {
					if err := WriteImage(out, h, data); err != nil {
						b.Fatal(err)
					}
				}
			})
		}
	}
}

// BenchmarkDecode converts one 1 MiB chunk of raw values to float32, the work ReadVolume
// does per chunk after the bytes arrive; MB/s is of raw input.
func BenchmarkDecode(b *testing.B) {
	for _, dt := range []DataType{Int16, Float32} {
		for _, scaled := range []bool{false, true} {
			name := dt.String()
			if scaled {
				name += "/scaled"
			}
			b.Run(name, func(b *testing.B) {
				raw := make([]byte, chunkBytes)
				for i := range raw {
					raw[i] = byte(i * 31)
				}
				if dt == Float32 {
					for i := 0; i < len(raw); i += 4 {
						binary.LittleEndian.PutUint32(raw[i:], math.Float32bits(float32(i)))
					}
				}
				dst := make([]float32, len(raw)/dt.Size())
				b.SetBytes(int64(len(raw)))
				for range b.N {
					decode(dst, raw, dt, 0.5, 3, scaled)
				}
			})
		}
	}
}
