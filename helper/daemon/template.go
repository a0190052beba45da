package daemon

import (
	"encoding/json"
	"fmt"
	"math"
	"os"
	"path/filepath"

	"github.com/hubscope/hubscope/assets"
	"github.com/hubscope/hubscope/helper/nifti"
	"github.com/hubscope/hubscope/helper/realign"
	"github.com/hubscope/hubscope/ipc/schema"
)

// VolumeTemplate is the MNI152 T1 brain (ICBM 2009a, 2 mm; assets/template) resampled onto a
// job's grid, the anatomy a clinician reads the overlays against. It is served for scans in MNI
// space and for scans registered to it (qc/registration.json with a plausible affine).
const VolumeTemplate = "template"

// templateImage is the embedded display template, read once.
type templateImage struct {
	dims   [3]int
	affine [4][4]float64
	data   []float32
}

func (d *Daemon) displayTemplate() (*templateImage, error) {
	d.templateOnce.Do(func() {
		d.template, d.templateErr = readDisplayTemplate()
	})
	return d.template, d.templateErr
}

// readDisplayTemplate reads the embedded display template in place (nifti.ReadImageFS).
func readDisplayTemplate() (*templateImage, error) {
	h, data, err := nifti.ReadImageFS(assets.Template, assets.DisplayTemplateImage)
	if err != nil {
		return nil, fmt.Errorf("embedded MNI display template: %w", err)
	}
	return &templateImage{dims: [3]int{h.Nx(), h.Ny(), h.Nz()}, affine: h.Affine(), data: data}, nil
}

// scanToMNI reads the scan→MNI affine of a registered scan from qc/registration.json: nil when
// registration did not run, was not needed, or gave an implausible affine (the pipeline then
// refuses atlas labels too).
func scanToMNI(dir string) (*[4][4]float64, error) {
	b, err := os.ReadFile(filepath.Join(dir, filepath.FromSlash(schema.RegistrationFile)))
	if os.IsNotExist(err) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	var rr schema.Registration
	if err := json.Unmarshal(b, &rr); err != nil {
		return nil, fmt.Errorf("%s: %w", schema.RegistrationFile, err)
	}
	if rr.Result == nil || !rr.Result.Plausible || !rr.LabelsUseIt {
		return nil, nil
	}
	m := rr.Result.ToMNI
	return &m, nil
}

// resampleTemplate samples t trilinearly at every voxel of a grid whose voxel → MNI map is
// toMNI (the scan's affine, composed with its registration when there is one); 0 outside the
// template.
func resampleTemplate(t *templateImage, dims [3]int, toMNI [4][4]float64) ([]float32, error) {
	inv, ok := realign.Inverse(t.affine)
	if !ok {
		return nil, fmt.Errorf("the MNI display template's affine is singular")
	}
	m := realign.Mul(inv, toMNI) // grid voxel → template voxel
	out := make([]float32, dims[0]*dims[1]*dims[2])
	nx, ny, nz := t.dims[0], t.dims[1], t.dims[2]
	at := func(i, j, k int) float64 {
		if i < 0 || j < 0 || k < 0 || i >= nx || j >= ny || k >= nz {
			return 0
		}
		return float64(t.data[i+nx*(j+ny*k)])
	}
	f := 0
	for k := 0; k < dims[2]; k++ {
		for j := 0; j < dims[1]; j++ {
			for i := 0; i < dims[0]; i++ {
				var p [3]float64
				for r := 0; r < 3; r++ {
					p[r] = m[r][0]*float64(i) + m[r][1]*float64(j) + m[r][2]*float64(k) + m[r][3]
				}
				x0, y0, z0 := math.Floor(p[0]), math.Floor(p[1]), math.Floor(p[2])
				fx, fy, fz := p[0]-x0, p[1]-y0, p[2]-z0
				i0, j0, k0 := int(x0), int(y0), int(z0)
				var s float64
				for c := 0; c < 8; c++ {
					di, dj, dk := c&1, c>>1&1, c>>2&1
					w := (1 - fx + float64(di)*(2*fx-1)) * (1 - fy + float64(dj)*(2*fy-1)) * (1 - fz + float64(dk)*(2*fz-1))
					if w != 0 {
						s += w * at(i0+di, j0+dj, k0+dk)
					}
				}
				out[f] = float32(s)
				f++
			}
		}
	}
	return out, nil
}
