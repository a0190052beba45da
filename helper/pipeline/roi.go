package pipeline

import (
	"fmt"
	"strings"

	"github.com/hubscope/hubscope/assets"
	"github.com/hubscope/hubscope/helper/atlas"
	"github.com/hubscope/hubscope/helper/nifti"
	"github.com/hubscope/hubscope/helper/progress"
	"github.com/hubscope/hubscope/helper/scan"
	"github.com/hubscope/hubscope/ipc/settings"
)

// Network nodes (--nodes): the masked voxels, or the regions of --atlas.
const (
	NodesVoxels  = settings.NodesVoxels
	NodesRegions = settings.NodesRegions
	// AtlasAAL names the embedded AAL atlas (assets.Atlas) as --atlas.
	AtlasAAL = settings.AtlasAAL
)

// loadAtlas reads --atlas: a label image file, or "aal" for the embedded AAL.
func loadAtlas(path, names string) (*atlas.Atlas, error) {
	if strings.EqualFold(path, AtlasAAL) {
		return atlas.LoadFS(assets.Atlas, assets.AtlasImage, assets.AtlasNames)
	}
	return atlas.Load(path, names)
}

// regionSeries turns a voxel scan into a region scan as nilearn's NiftiLabelsMasker does
// (nilearn 0.10.4, regions.signal_extraction.img_to_signals_labels with the scan's mask): the
// atlas is resampled to the scan's grid by nearest neighbour (atlas.ResampleLikeNilearn), and each region's series is the
// mean of its masked voxels' series, in increasing label order. The series given are the
// cleaned ones: cleaning is linear (detrending, band-pass, confound regression, censoring), so
// the mean of cleaned voxel series equals the cleaned mean series the masker would clean.
// Labels of the atlas without a voxel inside the mask are named in one note and dropped. It
// returns each region's centroid (mean world position of its voxels, in MNI through toMNI when
// given) for the exports.
func regionSeries(s *scan.Scan, atl *atlas.Atlas, toMNI *[4][4]float64, rep progress.Reporter) (*scan.Scan, [][3]float64, error) {
	if s.IJK == nil {
		return nil, nil, fmt.Errorf("%s: --nodes regions needs an image: a time-series matrix has no voxels to average", s.Source)
	}
	affine := s.Affine
	if toMNI != nil {
		affine = mul4(*toMNI, s.Affine)
	}
	if !atl.SameGrid(s.Dims, affine) {
		rep.Note(fmt.Sprintf("atlas %s resampled to the scan's grid (%d×%d×%d) by nearest neighbour", atl.Path, s.Dims[0], s.Dims[1], s.Dims[2]))
	}
	lab, err := atl.ResampleLikeNilearn(s.Dims, affine)
	if err != nil {
		return nil, nil, err
	}
	members := map[int][]int{}
	for v, p := range s.IJK {
		if id := int(lab[int(p[0])+s.Dims[0]*(int(p[1])+s.Dims[1]*int(p[2]))]); id != 0 {
			members[id] = append(members[id], v)
		}
	}
	var ids []int
	var empty []string
	for _, id := range atl.IDs() {
		if len(members[id]) > 0 {
			ids = append(ids, id)
		} else {
			empty = append(empty, fmt.Sprintf("%d %s", id, atl.Name(id)))
		}
	}
	if len(empty) > 0 {
		rep.Note(fmt.Sprintf("atlas %s: %d of %d labels have no voxel inside the mask and are dropped: %s", atl.Path, len(empty), len(empty)+len(ids), strings.Join(empty, ", ")))
	}
	if len(ids) < 2 {
		return nil, nil, fmt.Errorf("atlas %s: %d of its labels cover voxels inside the scan %s's mask; a region network needs at least 2 (is the atlas in the scan's space?)", atl.Path, len(ids), s.Source)
	}
	out := *s
	out.N, out.IJK, out.Dims, out.Mean, out.Mask = len(ids), nil, [3]int{}, nil, scan.Mask{}
	out.Data = make([]float32, len(ids)*s.L)
	out.Labels = make([]string, len(ids))
	pos := make([][3]float64, len(ids))
	sum := make([]float64, s.L)
	for r, id := range ids {
		clear(sum)
		for _, v := range members[id] {
			for t, x := range s.Data[v*s.L : (v+1)*s.L] {
				sum[t] += float64(x)
			}
			x := scan.VoxelToWorld(affine, [3]float64{float64(s.IJK[v][0]), float64(s.IJK[v][1]), float64(s.IJK[v][2])})
			for d := range 3 {
				pos[r][d] += x[d]
			}
		}
		n := float64(len(members[id]))
		for t := range sum {
			out.Data[r*s.L+t] = float32(sum[t] / n)
		}
		for d := range 3 {
			pos[r][d] /= n
		}
		out.Labels[r] = atl.Name(id)
	}
	rep.Note(fmt.Sprintf("nodes: %d regions of atlas %s (mean series of their %d masked voxels)", len(ids), atl.Path, s.N))
	return &out, pos, nil
}

func mul4(a, b [4][4]float64) [4][4]float64 {
	var c [4][4]float64
	for i := range 4 {
		for j := range 4 {
			for k := range 4 {
				c[i][j] += a[i][k] * b[k][j]
			}
		}
	}
	return c
}

// spaceNames are NIfTI's transform codes in words (nifti1.h NIFTI_XFORM_*).
var spaceNames = map[int32]string{0: "unknown space (code 0)", 1: "scanner space (code 1)", 2: "an aligned space (code 2)",
	3: "Talairach space (code 3)", 4: "MNI152 space (code 4)", 5: "a template space (code 5)"}

// checkAtlasSpace refuses an atlas that cannot be placed on the scan (atlasMisplaced): for
// region nodes the network itself would be built on the wrong voxels.
func checkAtlasSpace(cfg Config, s *scan.Scan, atl *atlas.Atlas, toMNI *[4][4]float64) error {
	if why := atlasMisplaced(cfg, s, atl, toMNI); why != "" {
		return fmt.Errorf("%s: use an atlas on the scan's own space (or --register on for an MNI152 atlas)", why)
	}
	return nil
}

// atlasMisplaced says why a user's atlas cannot be read at the scan's voxels, or "" when it
// can. Registered to MNI (toMNI), the labels are looked up at ToMNI·x. Otherwise they are read
// at the scan's own coordinates, which is right only when the scan lies in the atlas' space:
//   - a registration that was asked for and refused as implausible (qc/registration.json)
//     leaves the scan where it was, not in MNI space: an atlas in a standard space (MNI152,
//     Talairach, a template) is refused unless the scan's header names that same space. A
//     clinician who gave an MNI atlas expects a hub's region to be its MNI region or none,
//     never the label at a subject-space position (the embedded AAL is refused alike:
//     defaultHubAtlas);
//   - an MNI152 atlas over a scan whose header says scanner (or unknown) space, not
//     registered, is refused; aligned and template codes say too little to judge and pass.
//
// An atlas on the scan's own space (scanner or aligned codes: a subject's parcellation) is
// always read at the scan's coordinates.
func atlasMisplaced(cfg Config, s *scan.Scan, atl *atlas.Atlas, toMNI *[4][4]float64) string {
	if toMNI != nil || atl == nil {
		return ""
	}
	code, known := int32(0), false
	if r, err := nifti.Open(cfg.Scan); err == nil { // not a NIfTI file (a DICOM conversion): no header to compare
		code, known = r.Header.SformCode, true
		if code == 0 {
			code = r.Header.QformCode
		}
		r.Close()
	}
	standard := atl.Space == nifti.XformTalairach || atl.Space == nifti.XformMNI152 || atl.Space == nifti.XformTemplateOther
	if _, mni := alreadyMNI(cfg.Scan); registerWanted(cfg) && s.IJK != nil && !mni && standard && (!known || code != atl.Space) {
		return fmt.Sprintf("atlas %s is in %s but the registration of the scan %s to MNI was refused as implausible (qc/registration.json), so the scan is not in that space",
			atl.Path, spaceNames[atl.Space], cfg.Scan)
	}
	if known && atl.Space == nifti.XformMNI152 && (code == nifti.XformScannerAnat || code == 0) {
		return fmt.Sprintf("atlas %s is in %s but the scan %s is in %s and was not registered to MNI",
			atl.Path, spaceNames[atl.Space], cfg.Scan, spaceNames[code])
	}
	return ""
}
