package pipeline

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/hubscope/hubscope/helper/internal/pyref"
	"github.com/hubscope/hubscope/helper/progress"
	"github.com/hubscope/hubscope/internal/shareddata"
)

// roiFixture writes nipy's functional run (a real 17×21×3 EPI, 20 volumes), a mask of its
// brighter voxels, and a label image on a coarser, shifted grid (8 mm voxels, so the atlas
// must be resampled by nearest neighbour): one label per block, plus label 77 in a corner that
// lies outside the mask (to be listed and dropped).
const roiFixture = `
import sys, numpy as np, nibabel as nib
src, out = sys.argv[1], sys.argv[2]
img = nib.load(src)
data = np.asarray(img.dataobj, dtype=np.float32)
nib.save(nib.Nifti1Image(data, img.affine), out + "/scan.nii.gz")
mean = data.mean(axis=3)
mask = (mean > np.percentile(mean, 40)).astype(np.uint8)
nib.save(nib.Nifti1Image(mask, img.affine), out + "/mask.nii.gz")
aff = img.affine.copy()
aff[:3, :3] = np.diag([8.0, 8.0, 8.0]) @ np.sign(img.affine[:3, :3])
aff[:3, 3] = img.affine[:3, 3] + 3.0
shape = (10, 12, 4)
lab = np.zeros(shape, np.int16)
n = 0
for i in range(0, shape[0], 2):
    for j in range(0, shape[1], 2):
        for k in range(0, shape[2], 2):
            n += 1
            lab[i:i+2, j:j+2, k:k+2] = n
lab[0, 0, 0] = 77
nib.save(nib.Nifti1Image(lab, aff), out + "/atlas.nii.gz")
scanner = nib.Nifti1Image(data[..., :8], img.affine)
scanner.set_sform(img.affine, code=1); scanner.set_qform(img.affine, code=1)
nib.save(scanner, out + "/scanner.nii.gz")
mni = nib.Nifti1Image(lab, aff)
mni.set_sform(aff, code=4)
nib.save(mni, out + "/atlas_mni.nii.gz")
`

// roiCheck: nilearn 0.10.4's NiftiLabelsMasker (resampling the labels to the data, the scan's
// mask) gives the region series series.npy holds, in the same label order, and numpy's
// correlation of them gives the network's weights; the kept edges are exactly the pairs at or
// above the network's threshold.
const roiCheck = `
import sys, json, numpy as np, pandas as pd, scipy.sparse as sp
sys.path.insert(0, sys.argv[1])
from nilearn.maskers import NiftiLabelsMasker
d, b = sys.argv[2], sys.argv[3]
m = NiftiLabelsMasker(d + "/atlas.nii.gz", mask_img=d + "/mask.nii.gz", resampling_target="data")
ref = m.fit_transform(d + "/scan.nii.gz")            # T × R
ours = np.load(b + "/series.npy").T                  # series.npy is R × T
labels = [int(x) for x in m.labels_ if x != 0]
nodes = pd.read_csv(b + "/nodes.tsv", sep="\t")
names = [int(s.split()[-1]) for s in nodes.label]
assert 77 not in names
# nilearn 0.10.4 keeps a label without a voxel in the mask as a column of zeros (or NaN); we
# drop it.
empty = [l for c, l in enumerate(labels) if (np.nan_to_num(ref[:, c]) == 0).all()]
assert names == [l for l in labels if l not in empty], (names, labels, empty)
ref = ref[:, [c for c, l in enumerate(labels) if l not in empty]]
assert ours.shape == ref.shape, (ours.shape, ref.shape)
err = np.abs(ours - ref).max() / np.abs(ref).max()
assert err < 1e-6, err
r = np.corrcoef(ref.T.astype(np.float64))
A = sp.load_npz(b + "/network.npz").tocoo()
werr = max(abs(float(w) - r[i, j]) for i, j, w in zip(A.row, A.col, A.data))
assert werr < 1e-5, werr
thr = json.load(open(b + "/metrics.json"))["network"]["threshold"]
iu = np.triu_indices(len(names), 1)
assert A.nnz == int((r[iu] >= thr - 1e-6).sum()), (A.nnz, int((r[iu] >= thr - 1e-6).sum()))
print("ok", ref.shape[1], "regions,", A.nnz, "edges, series error", err, "weight error", werr)
`

type noteLog struct {
	progress.Reporter
	notes []string
}

func (n *noteLog) Note(s string) { n.notes = append(n.notes, s) }

// TestRegionNetworkMatchesNilearn: run --nodes regions with an atlas on another grid equals
// NiftiLabelsMasker + numpy (roiCheck), says that the atlas was resampled, and lists label 77
// (no voxel in the mask) as dropped.
func TestRegionNetworkMatchesNilearn(t *testing.T) {
	nilearn := pyref.Nilearn(t)
	pyref.Require(t, "nibabel")
	data := os.Getenv("HUBSCOPE_DATA")
	if data == "" {
		data = filepath.Join(nilearn, "..", "..", "data")
	}
	src := filepath.Join(data, "nipy_functional.nii.gz")
	if _, err := os.Stat(src); err != nil {
		if pyref.Strict() {
			t.Fatalf("shared data missing: %v (set HUBSCOPE_DATA)", err)
		}
		t.Skipf("shared data missing: %v", err)
	}
	dir := t.TempDir()
	pyref.Run(t, roiFixture, src, dir)
	cfg := rawDefaults() // roiCheck averages the series as loaded
	cfg.Scan, cfg.Mask, cfg.Atlas, cfg.Nodes = filepath.Join(dir, "scan.nii.gz"), filepath.Join(dir, "mask.nii.gz"), filepath.Join(dir, "atlas.nii.gz"), NodesRegions
	cfg.Out, cfg.Backend, cfg.KeepSeries, cfg.Density = filepath.Join(t.TempDir(), "b"), "cpu", true, 0.2
	log := &noteLog{Reporter: progress.Discard}
	res, err := Run(context.Background(), cfg, log)
	if err != nil {
		t.Fatal(err)
	}
	out := string(pyref.Run(t, roiCheck, nilearn, dir, res.Dir))
	if !strings.HasPrefix(out, "ok") {
		t.Fatal(out)
	}
	t.Log(strings.TrimSpace(out))
	all := strings.Join(log.notes, "\n")
	for _, want := range []string{"resampled to the scan's grid", "region 10"} {
		if !strings.Contains(all, want) {
			t.Errorf("notes lack %q:\n%s", want, all)
		}
	}
	for _, f := range []string{"network.graphml", "network.node", "network.edge", "hubs.node"} {
		if _, err := os.Stat(filepath.Join(res.Dir, f)); err != nil {
			t.Errorf("region network: %v", err)
		}
	}
	// An MNI152 atlas over a scan in scanner space, not registered: refused, naming both.
	bad := cfg
	bad.Scan, bad.Atlas, bad.Out, bad.KeepSeries = filepath.Join(dir, "scanner.nii.gz"), filepath.Join(dir, "atlas_mni.nii.gz"), filepath.Join(t.TempDir(), "bad"), false
	if _, err := Run(context.Background(), bad, nil); err == nil || !strings.Contains(err.Error(), "atlas_mni.nii.gz is in MNI152 space") || !strings.Contains(err.Error(), "scanner.nii.gz is in scanner space") {
		t.Errorf("MNI atlas over a scanner-space scan: %v", err)
	} else if _, serr := os.Stat(bad.Out); serr == nil {
		t.Error("a refused run left a bundle")
	}
	// A labels table (TSV with a header, names with spaces) must match the image's values.
	var tsv strings.Builder
	tsv.WriteString("index\tname\n")
	for id := 1; id <= 59; id++ {
		fmt.Fprintf(&tsv, "%d\tblock %d\n", id, id)
	}
	short := filepath.Join(dir, "short.tsv")
	if err := os.WriteFile(short, []byte(tsv.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	fmt.Fprintf(&tsv, "60\tblock 60\n77\tcorner\n99\tnowhere\n")
	long := filepath.Join(dir, "long.tsv")
	if err := os.WriteFile(long, []byte(tsv.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	for table, want := range map[string]string{short: "image labels it does not name: 60, 77", long: "names for labels the image does not hold: 99"} {
		bad := cfg
		bad.AtlasNames, bad.Out = table, filepath.Join(t.TempDir(), "tab")
		if _, err := Run(context.Background(), bad, nil); err == nil || !strings.Contains(err.Error(), want) || !strings.Contains(err.Error(), table) {
			t.Errorf("labels table %s: %v, want %q", filepath.Base(table), err, want)
		}
	}

	cfg.Atlas = ""
	if err := cfg.Validate(); err == nil || !strings.Contains(err.Error(), "needs an atlas") {
		t.Errorf("--nodes regions without an atlas: %v", err)
	}
}

// haxbyFixture writes one axial slice of Haxby et al.'s EPI, a mask of its brighter voxels and
// a block atlas on a grid 2.5 times coarser in-plane and shifted by a fraction of a voxel (so
// that it is resampled by nearest neighbour), one label per 2×2 atlas voxels.
const haxbyFixture = `
import sys, numpy as np, nibabel as nib
src, out = sys.argv[1], sys.argv[2]
img = nib.load(src)
data = np.asarray(img.dataobj, dtype=np.float32)
nib.save(nib.Nifti1Image(data, img.affine), out + "/scan.nii.gz")
mean = data.mean(axis=3)
nib.save(nib.Nifti1Image((mean > np.percentile(mean, 40)).astype(np.uint8), img.affine), out + "/mask.nii.gz")
aff = img.affine.copy()
aff[:3, 3] += img.affine[:3, :3] @ np.array([0.7, 0.4, 0.0])
aff[:3, 0] *= 2.5
aff[:3, 1] *= 2.5
lab = np.zeros((16, 8, 1), np.int16)
for i in range(16):
    for j in range(8):
        lab[i, j, 0] = 1 + (i // 2) + 8 * (j // 2)
nib.save(nib.Nifti1Image(lab, aff), out + "/atlas.nii.gz")
`

// TestRegionSeriesMatchNilearnHaxby is roiCheck on a second real scan: one axial slice of
// Haxby et al.'s EPI (40×20×1 voxels of 3.1×3.75×3.75 mm, 1,452 volumes, scanner space), with
// haxbyFixture's block atlas resampled onto it.
func TestRegionSeriesMatchNilearnHaxby(t *testing.T) {
	nilearn := pyref.Nilearn(t)
	pyref.Require(t, "nibabel")
	src := shareddata.Path(t, "haxby2001_slice_bold.nii.gz")
	dir := t.TempDir()
	pyref.Run(t, haxbyFixture, src, dir)
	cfg := rawDefaults()
	cfg.Scan, cfg.Mask, cfg.Atlas, cfg.Nodes = filepath.Join(dir, "scan.nii.gz"), filepath.Join(dir, "mask.nii.gz"), filepath.Join(dir, "atlas.nii.gz"), NodesRegions
	cfg.Out, cfg.Backend, cfg.KeepSeries, cfg.Density = filepath.Join(t.TempDir(), "b"), "cpu", true, 0.2
	res, err := Run(context.Background(), cfg, nil)
	if err != nil {
		t.Fatal(err)
	}
	out := string(pyref.Run(t, roiCheck, nilearn, dir, res.Dir))
	if !strings.HasPrefix(out, "ok") {
		t.Fatal(out)
	}
	t.Log(strings.TrimSpace(out))
}
