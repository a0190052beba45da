package nifti_test

import (
	"fmt"
	"io"
	"log"
	"os"
	"path/filepath"

	"github.com/hubscope/hubscope/helper/nifti"
)

// A 4D series is written volume by volume and streamed back one volume at a time.
func Example() {
	dir, err := os.MkdirTemp("", "nifti-example")
	if err != nil {
		log.Fatal(err)
	}
	defer os.RemoveAll(dir)
	path := filepath.Join(dir, "bold.nii.gz")

	// 2 mm isotropic voxels, origin at (-90, -126, -72) mm, TR 2 s.
	affine := [4][4]float64{{2, 0, 0, -90}, {0, 2, 0, -126}, {0, 0, 2, -72}, {0, 0, 0, 1}}
	h := nifti.NewHeader([]int{3, 2, 2, 4}, nifti.Int16, affine, 2)
	w, err := nifti.Create(path, h)
	if err != nil {
		log.Fatal(err)
	}
	vol := make([]float32, h.VoxelsPerVolume())
	for t := range 4 {
		for i := range vol {
			vol[i] = float32(100*t + i)
		}
		if err := w.WriteVolume(vol); err != nil {
			w.Abort()
			log.Fatal(err)
		}
	}
	if err := w.Close(); err != nil {
		log.Fatal(err)
	}

	r, err := nifti.Open(path)
	if err != nil {
		log.Fatal(err)
	}
	defer r.Close()
	fmt.Printf("%d×%d×%d, %d volumes of %s, TR %g s, origin %v\n", r.Header.Nx(), r.Header.Ny(), r.Header.Nz(),
		r.Header.Volumes(), r.Header.DataType, r.Header.TR(), []float64{r.Header.Affine()[0][3], r.Header.Affine()[1][3], r.Header.Affine()[2][3]})
	for {
		err := r.ReadVolume(vol)
		if err == io.EOF {
			break
		}
		if err != nil {
			log.Fatal(err)
		}
		fmt.Println(vol[:3])
	}
	// Output:
	// 3×2×2, 4 volumes of int16, TR 2 s, origin [-90 -126 -72]
	// [0 1 2]
	// [100 101 102]
	// [200 201 202]
	// [300 301 302]
}
