package scan

import "fmt"

// Mask rules (Scan.MaskRule): how the voxels that became nodes were chosen. The automatic
// rules are tried in this order, and the first that keeps at least MinMaskShare of the voxels
// with signal wins (AutoMask).
const (
	// MaskRuleUser: the mask file given by the user (Options.MaskPath).
	MaskRuleUser = "mask file"
	// MaskRuleEPI: nilearn's compute_epi_mask (EPIMask64): the mean image's histogram
	// threshold, then an opening and the largest connected component.
	MaskRuleEPI = "automatic: nilearn's compute_epi_mask"
	// MaskRuleThreshold: compute_epi_mask's histogram threshold alone (step 3 of EPIMask64),
	// without the opening and the largest component, among the voxels whose signal changes. On a grid only a few voxels thick the
	// opening erodes the whole brain; on a cropped or skull-stripped image the largest
	// component after erosion can be a small part of it.
	MaskRuleThreshold = "automatic: compute_epi_mask's intensity threshold alone (no opening)"
	// MaskRuleSignal: every voxel whose series changes over time (a non-zero, non-constant
	// signal). Data already masked outside the brain (zeros or a flat floor there) have no
	// background the histogram could separate; their changing voxels are the brain.
	MaskRuleSignal = "automatic: every voxel whose signal changes over time"
)

// MinMaskShare is the smallest share of the voxels with signal (series that change over time)
// an automatic rule may keep before the next rule is tried. A raw EPI volume's brain fills
// well over a tenth of its field of view, background noise included, so compute_epi_mask's
// answer stands on ordinary scans; on cropped or pre-masked images, which have no background
// to find, it keeps a few voxels or none (nilearn gives 18 of 600 voxels on Haxby's 2.5 mm
// run, and none on a 3-slice or single-slice image).
const MinMaskShare = 0.10

// AutoMask chooses the automatic mask of a scan from its mean image (grid dims, i fastest)
// and the voxels whose series change over time (changing; nil counts every voxel): nilearn's
// compute_epi_mask (MaskRuleEPI) when it keeps at least MinMaskShare of the changing voxels,
// else its histogram threshold alone (MaskRuleThreshold) under the same condition, else every
// changing voxel (MaskRuleSignal). It returns the mask, the rule and one sentence that names
// the rule, the voxels kept and, after a fallback, why the earlier rules were passed over.
func AutoMask(mean []float64, changing []bool, dims [3]int, lower, upper float64) (Mask, string, string) {
	if lower <= 0 {
		lower = DefaultLowerCutoff
	}
	if upper <= 0 {
		upper = DefaultUpperCutoff
	}
	signal := len(mean)
	if changing != nil {
		signal = 0
		for _, c := range changing {
			if c {
				signal++
			}
		}
	}
	enough := func(n int) bool { return n > 0 && float64(n) >= MinMaskShare*float64(signal) }
	epi := EPIMask64(mean, dims, lower, upper)
	ne := 0 // voxels of nilearn's mask with signal: its constant voxels are dropped later
	for i, in := range epi.In {
		if in && (changing == nil || changing[i]) {
			ne++
		}
	}
	if enough(ne) {
		return epi, MaskRuleEPI, fmt.Sprintf("mask: %s, %d voxels", MaskRuleEPI, epi.Count())
	}
	why := fmt.Sprintf("nilearn's compute_epi_mask kept %d of the %d voxels whose signal changes (under %.0f %%: the image has no background to separate, as in cropped, skull-stripped or already masked data)",
		ne, signal, 100*MinMaskShare)

	thr := Mask{Dims: dims, In: make([]bool, len(mean))}
	nt := 0
	sm := smoothMean(mean, dims)
	if tau, ok := epiThreshold(sm, lower, upper); ok {
		for i, v := range sm {
			if v >= tau && (changing == nil || changing[i]) {
				thr.In[i] = true
				nt++
			}
		}
	}
	if enough(nt) {
		return thr, MaskRuleThreshold, fmt.Sprintf("mask: %s, %d voxels (%s)", MaskRuleThreshold, nt, why)
	}
	why += fmt.Sprintf("; its intensity threshold alone kept %d", nt)

	sig := Mask{Dims: dims, In: make([]bool, len(mean))}
	for i := range sig.In {
		sig.In[i] = changing == nil || changing[i]
	}
	return sig, MaskRuleSignal, fmt.Sprintf("mask: %s, %d voxels (%s)", MaskRuleSignal, signal, why)
}
