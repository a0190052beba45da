package scan

import (
	"context"
	"fmt"

	"github.com/hubscope/hubscope/helper/nifti"
	"github.com/hubscope/hubscope/helper/progress"
)

// Survey is a scan's first pass for a cohort: what Load would find, and (SurveyKeep) the
// series of the scan's own mask in the file's stored type. A cohort's loader surveys every
// subject, matches their voxels, and then takes each subject's scan with the common mask
// (Survey.Load) straight into the cohort's matrix.
type Survey struct {
	Dims     [3]int
	Affine   [4][4]float64
	TR       float64
	L        int
	Mask     Mask   // the mask Load would use: the user's, or the automatic one
	MaskRule string // how Mask was chosen (Scan.MaskRule)
	Note     string // the automatic mask's one line
	// Usable marks the grid voxels whose series Load would keep (finite, not constant): with
	// Mask, the nodes Load would give.
	Usable []bool

	path, maskPath string
	keep           *kept // SurveyKeep's series; nil: Survey.Load reads the file
}

// SurveyScan reads a 4D NIfTI once (one float64 volume at a time) and returns its Survey: the
// header's facts, its mask (maskPath, or the automatic EPI mask from the mean image as Load
// computes it) and which voxels have usable series. Errors name the file, as Load's do.
func SurveyScan(ctx context.Context, path, maskPath string) (*Survey, error) {
	r, err := nifti.Open(path)
	if err != nil {
		return nil, err
	}
	defer r.Close()
	h := r.Header
	sv, sel, err := surveyHeader(&h, path, maskPath)
	if err != nil {
		return nil, err
	}
	L := sv.L
	n := h.VoxelsPerVolume()
	sv.Usable = make([]bool, n)
	for i := range sv.Usable {
		sv.Usable[i] = true
	}
	mean, changing, err := meanImage(ctx, r, path, sel, L, sv.Usable, progress.OrDiscard(nil))
	if err != nil {
		return nil, err
	}
	if maskPath != "" {
		if sv.Mask, err = LoadMask(maskPath, h); err != nil {
			return nil, err
		}
		sv.MaskRule = MaskRuleUser
	} else {
		sv.Mask, sv.MaskRule, sv.Note = AutoMask(mean, changing, sv.Dims, 0, 0)
		if sv.Mask.Count() == 0 {
			return nil, fmt.Errorf("%s: no voxel's signal changes over time: every series is constant, so there is nothing to correlate", path)
		}
	}
	return sv, nil
}

// SurveyHeader is the part of a Survey that the header gives (Dims, Affine, TR, L), with
// SurveyScan's errors for a header that cannot be a scan's: a cohort's loader checks the
// subjects' grids and time axes before it decodes any of them.
func SurveyHeader(path string) (*Survey, error) {
	r, err := nifti.Open(path)
	if err != nil {
		return nil, err
	}
	defer r.Close()
	sv, _, err := surveyHeader(&r.Header, path, "")
	return sv, err
}

func surveyHeader(h *nifti.Header, path, maskPath string) (*Survey, []int, error) {
	sel, err := SelectVolumes(h, 0, nil)
	if err != nil {
		return nil, nil, fmt.Errorf("%s: %w", path, err)
	}
	L := h.Volumes()
	if sel != nil {
		L = len(sel)
	}
	if h.Dim[0] < 4 || L < 2 {
		return nil, nil, fmt.Errorf("%s: 3D image (%d×%d×%d, one volume) where a 4D time series is needed", path, h.Nx(), h.Ny(), h.Nz())
	}
	if L < MinTimePoints {
		return nil, nil, fmt.Errorf("%s: %d volumes; at least %d time points are needed for a correlation", path, L, MinTimePoints)
	}
	return &Survey{Dims: [3]int{h.Nx(), h.Ny(), h.Nz()}, Affine: h.Affine(), TR: h.TR(), L: L, path: path, maskPath: maskPath}, sel, nil
}
