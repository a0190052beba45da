// Package scan is HubScope's model of a resting-state scan: the masked voxels' time series as
// one voxel-major float32 matrix (row = voxel, contiguous series), the voxels' ijk positions,
// the voxel→world affine and TR. It builds the model from one decoding of the NIfTI file: the
// stored volumes are held (in the file's datatype) while the automatic mask is computed, or
// while a .nii.gz that inflates at once is converted, up to KeepLimit; larger scans stream
// volume by volume, the masked matrix plus a few volumes (see Load). It also builds masks (user
// mask on the same grid, or an automatic EPI mask as nilearn's compute_epi_mask does) and reads
// plain time-series matrices (CSV/TSV, .npy) for ROI-level networks.
//
// Node order: the nodes of an image are its masked voxels in increasing flat grid index
// i + Nx·(j + Ny·k), NIfTI's storage order (i fastest; Fortran order of the (i, j, k) array
// that nibabel returns), so node v of a scan is the v-th True of
// mask.ravel(order="F") in numpy terms. The nodes of a plain matrix are its rows, in order.
package scan

import (
	"context"
	"fmt"
	"path/filepath"
	"strings"

	"github.com/hubscope/hubscope/helper/progress"
)

// Options choose the mask of a NIfTI scan.
type Options struct {
	// MaskPath is a user mask: a 3D NIfTI on the scan's grid (non-zero = in). "" computes
	// the automatic mask from the scan's mean image (AutoMask: nilearn's compute_epi_mask,
	// with fallbacks for images that have no background).
	MaskPath string
	// Mask, when set, is a mask already in memory on the scan's grid, used instead of
	// MaskPath's file and of the automatic mask: the group step's union of the subjects'
	// masks, or each subject's mask from the cohort's first pass (SurveyScan), so Load makes no
	// pass of its own for it. MaskRule names how it was chosen (default MaskRuleUser); a
	// MaskPath given beside it is only hashed into the provenance.
	Mask     *Mask
	MaskRule string
	// LowerCutoff, UpperCutoff are compute_epi_mask's histogram fractions (0 → the defaults
	// 0.2 and 0.85).
	LowerCutoff, UpperCutoff float64
	// Mean asks for Scan.Mean, the temporal mean of every grid voxel (inside the mask or
	// not), as a background image for slice views. It is summed during the stream that
	// loads the series (or taken from the automatic mask's first pass, which computes it
	// anyway), so it costs one float64 per grid voxel and no extra read of the file.
	Mean bool
	// TimeAxis names the NIfTI axis (4 to 7) along which the volumes of the time series lie;
	// 0 means axis 4. An image with more than one non-spatial axis longer than 1 is refused
	// unless its time axis is named here and every other non-spatial axis has length 1 (a
	// 5D image is never silently read as one long series).
	TimeAxis int
	// Index chooses an entry (from 0) of each non-spatial axis besides the time axis that is
	// longer than 1: a 5D x×y×z×2×60 image (two echoes of 60 volumes) is read with
	// TimeAxis 5 and Index {4: 1} as its second echo's 60 volumes (see SelectVolumes).
	Index map[int]int
}

// Load reads a scan: a 4D NIfTI (.nii, .nii.gz, .hdr/.img; L ≥ 3 volumes) masked by
// opt.MaskPath or the automatic EPI mask, or a plain regions × time matrix chosen by
// extension (.csv, .tsv, .txt, .npy). Voxels (rows) whose series is constant or holds NaN/Inf
// are dropped and counted in Scan.Dropped (and told through rep.Note); an input with no
// usable series is an error.
//
// Memory: the masked N×L float32 matrix, plus a ring of 3 decoded volumes and 16 gathered
// masked volumes for the cache-friendly transpose. The automatic mask needs every voxel's
// mean before any series is taken: it keeps the stored volumes (in the file's datatype, 2
// bytes a value for int16) and a float64 mean image, so the file is decoded once; a scan whose
// stored data exceed KeepLimit is read twice instead (a first pass for the mean image,
// Scan.Passes 2), holding no full 4D array. With a mask given, a .nii.gz of one gzip member
// whose stored data fit KeepLimit is inflated whole in one call (nifti.Reader.InflateAll) and
// its series converted from memory; other files stream volume by volume.
//
// Progress: stage "load" (one unit per volume; bytes for a plain matrix), preceded by stage
// "epi-mask" (one unit per volume: the mean image's pass) when the automatic mask reads the
// file twice. ctx is
// checked between volumes; on cancellation Load returns an error wrapping ctx.Err().
// Every error names the input file.
func Load(ctx context.Context, path string, opt Options, rep progress.Reporter) (*Scan, error) {
	rep = progress.OrDiscard(rep)
	if err := ctx.Err(); err != nil {
		return nil, fmt.Errorf("load %s: %w", path, err)
	}
	switch strings.ToLower(filepath.Ext(path)) {
	case ".npy":
		return loadMatrix(ctx, path, true, rep)
	case ".csv", ".tsv", ".txt":
		return loadMatrix(ctx, path, false, rep)
	}
	return loadNIfTI(ctx, path, opt, rep)
}
