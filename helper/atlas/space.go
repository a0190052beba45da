package atlas

import "github.com/hubscope/hubscope/helper/nifti"

// Thresholds of the template-space decision (see InMNI).
const (
	mniCoverageCoded   = 0.5  // header says MNI152: only a sanity check against a wrong code
	mniCoverageUncoded = 0.85 // header says "aligned" or "other template": the grid must fit
	mniMaskLabelled    = 0.4
)

// InMNI decides whether a scan lies in MNI space, where an MNI atlas (the embedded AAL) names
// its regions, and returns the atlas resampled onto the scan's grid when it does (nil when it
// does not). codes are the scan header's sform and qform codes; inMask says which grid voxels
// (flat index, i fastest) are the scan's nodes, n of them.
//
// The header's space codes say what the writer claimed: code 4 (NIFTI_XFORM_MNI_152) is MNI by
// declaration; 3 (Talairach) is another space; 0 (unknown) and 1 (scanner) are the subject's
// own space. Codes 2 (aligned to another image) and 5 (another template) are what SPM, nibabel
// and our own writer use for images registered to a template, MNI or not, so for them the grid
// must show it: the atlas is resampled onto the grid and the scan's mask must cover at least
// 85 % of the atlas's labelled voxels (a brain in MNI space covers nearly all of the atlas's
// grey matter; one in another space misses whole lobes) while at least 40 % of the mask
// carries a label (the atlas labels grey matter only). A declared MNI scan need only cover
// half of the atlas (partial fields of view).
func (a *Atlas) InMNI(codes []int32, dims [3]int, affine [4][4]float64, inMask func(flat int) bool, n int) []float32 {
	if !MaySayMNI(codes) {
		return nil
	}
	declared := false
	for _, c := range codes {
		declared = declared || c == nifti.XformMNI152
	}
	grid, err := a.Resample(dims, affine)
	if err != nil {
		return nil // a singular scan affine: no space at all
	}
	labelled, covered := 0, 0
	for f, l := range grid {
		if l != 0 {
			labelled++
			if inMask(f) {
				covered++
			}
		}
	}
	if labelled == 0 || n == 0 {
		return nil
	}
	coverage, maskLabelled := float64(covered)/float64(labelled), float64(covered)/float64(n)
	mni := coverage >= mniCoverageUncoded && maskLabelled >= mniMaskLabelled
	if declared {
		mni = coverage >= mniCoverageCoded
	}
	if !mni {
		return nil
	}
	return grid
}

// MaySayMNI says whether a header's space codes leave MNI space possible: MNI152 (4), or an
// aligned (2) or template (5) space that InMNI checks against the grid.
func MaySayMNI(codes []int32) bool {
	for _, c := range codes {
		if c == nifti.XformMNI152 || c == nifti.XformAlignedAnat || c == nifti.XformTemplateOther {
			return true
		}
	}
	return false
}
