package realign

import (
	"context"
	"math/rand/v2"
	"os"
	"path/filepath"
	"testing"

	"github.com/hubscope/hubscope/helper/nifti"
)

// BenchmarkRealign200 is the workload: a 64×64×36 × 200-volume scan (a real Siemens
// EPI volume moved by a smooth drift within 3 mm / 3°, plus 1 % noise), realigned in two passes
// and resliced. With HUBSCOPE_BENCH_OUT set it also writes the scan there for the dipy peer.
func BenchmarkRealign200(b *testing.B) {
	g, src := readSeries(b, filepath.Join(dataDir(b), "dicom", "ref", "sag_int_36sl_21.nii"))
	const l = 200
	rng := rand.New(rand.NewPCG(1, 2))
	traj := make([]Params, l)
	for t := 1; t < l; t++ {
		for k := 0; k < 6; k++ {
			lim := 0.03
			if k >= 3 {
				lim = 0.03 * 3.14159 / 180
			}
			traj[t][k] = traj[t-1][k] + lim*rng.NormFloat64()*3
		}
	}
	vols := make([][]float32, l)
	for t := range vols {
		vols[t] = moveVolume(g, src[0], traj[t])
		for f := range vols[t] {
			vols[t][f] += float32(10 * rng.NormFloat64())
		}
	}
	if out := os.Getenv("HUBSCOPE_BENCH_OUT"); out != "" {
		flat := make([]float32, 0, l*g.Len())
		for _, v := range vols {
			flat = append(flat, v...)
		}
		if err := nifti.WriteImage(out, nifti.NewHeader([]int{g.Dims[0], g.Dims[1], g.Dims[2], l}, nifti.Float32, g.Affine, 3), flat); err != nil {
			b.Fatal(err)
		}
	}
	work := make([][]float32, l)
	for t := range work {
		work[t] = make([]float32, g.Len())
	}
	b.Run("screen", func(b *testing.B) {
		for i := 0; i < b.N; i++ {
			res, err := Screen(context.Background(), g, vols, DefaultOptions(), nil)
			if err != nil {
				b.Fatal(err)
			}
			b.ReportMetric(res.MaxDisplacement(), "mm")
		}
	})
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		for t := range work {
			copy(work[t], vols[t])
		}
		res, err := Estimate(context.Background(), g, work, DefaultOptions(), nil)
		if err != nil {
			b.Fatal(err)
		}
		ropt := DefaultOptions()
		ropt.Interp = BSpline
		if _, err := Reslice(context.Background(), g, work, res, ropt, nil); err != nil {
			b.Fatal(err)
		}
	}
}
