package pipeline

import (
	"fmt"
	"strings"

	"github.com/hubscope/hubscope/assets"
	"github.com/hubscope/hubscope/helper/atlas"
	"github.com/hubscope/hubscope/helper/nifti"
	"github.com/hubscope/hubscope/helper/scan"
)

// AALName is how the summary and metrics.json name the embedded atlas.
const AALName = "AAL (embedded; Tzourio-Mazoyer et al. 2002)"

// defaultHubAtlas is the atlas that names the hubs when --atlas was not given: the embedded AAL,
// as the daemon (the app) does, when the scan lies in MNI space — registered to it (toMNI), or
// so by its header and grid (fMRIPrep's space-MNI152 name, or atlas.InMNI's rule on the header's
// codes and the mask's fit to the atlas). Otherwise it returns nil and why, in one line for the
// summary: a label read at a subject-space position would name the wrong region.
func defaultHubAtlas(cfg Config, s *scan.Scan, toMNI *[4][4]float64) (*atlas.Atlas, string, error) {
	if cfg.Atlas != "" || cfg.Nodes == NodesRegions || s.IJK == nil {
		return nil, "", nil
	}
	var codes []int32
	space := ""
	if toMNI == nil {
		_, mni := alreadyMNI(cfg.Scan)
		if registerWanted(cfg) && !mni {
			// registerScan estimated an affine and refused it (implausible zooms or shear): the
			// issue's rule is to keep the network and refuse the labels, whatever the header says.
			return nil, "not named by region: the registration to MNI was refused as implausible (qc/registration.json)", nil
		}
		if mni {
			codes = []int32{nifti.XformMNI152}
		} else if r, err := nifti.Open(cfg.Scan); err == nil {
			codes = []int32{r.Header.SformCode, r.Header.QformCode}
			r.Close()
		}
		if !atlas.MaySayMNI(codes) {
			code := int32(0)
			if len(codes) > 0 {
				code = codes[0]
				if code == 0 {
					code = codes[1]
				}
			}
			space = spaceNames[code]
			if space == "" {
				space = fmt.Sprintf("space code %d", code)
			}
			return nil, "not named by region: the scan is in " + space + " and was not registered to MNI (--register on names them with the embedded AAL; --atlas FILE on the scan's own space names them too)", nil
		}
	}
	aal, err := atlas.LoadFS(assets.Atlas, assets.AtlasImage, assets.AtlasNames)
	if err != nil {
		return nil, "", err
	}
	if toMNI != nil {
		return aal, "", nil
	}
	in := s.Mask.In
	if aal.InMNI(codes, s.Dims, s.Affine, func(f int) bool { return f < len(in) && in[f] }, s.N) == nil {
		var words []string
		for _, c := range codes {
			if c != 0 && (len(words) == 0 || words[0] != spaceNames[c]) {
				words = append(words, spaceNames[c])
			}
		}
		return nil, "not named by region: the header says " + strings.Join(words, " / ") +
			" but the mask does not lie on the MNI brain (too little of the AAL atlas covered); --register on names them with the embedded AAL", nil
	}
	return aal, "", nil
}
