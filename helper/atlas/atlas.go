// Package atlas looks up the labelled region of a world (mm) position in an atlas image, such
// as AAL or AICHA from Debian's mricron-data, so that hub voxels can be named. The atlas may be
// on any grid: positions are mapped through its own affine to its nearest voxel.
package atlas

import (
	"bufio"
	"fmt"
	"io"
	"io/fs"
	"math"
	"os"
	"sort"
	"strconv"
	"strings"

	"github.com/hubscope/hubscope/helper/nifti"
	"github.com/hubscope/hubscope/helper/scan"
)

// Atlas is a 3D label image (0 = no region) with region names.
type Atlas struct {
	Path   string
	dims   [3]int
	affine [4][4]float64
	labels []float32
	Names  map[int]string
	// Space is the image's NIfTI transform code (sform, else qform; nifti1.h NIFTI_XFORM_*):
	// 4 = MNI152, 1 = scanner anatomical, 0 = unknown.
	Space int32
}

// Load reads a 3D label image and its names. namesPath "" looks for the MRIcron convention
// beside the image (aal.nii.gz → aal.nii.txt); without a names file regions are called
// "region N". Names files hold one region per line: "index name [anything]", # for comments.
func Load(path, namesPath string) (*Atlas, error) {
	h, data, err := nifti.ReadImage(path)
	if err != nil {
		return nil, fmt.Errorf("atlas: %w", err)
	}
	a, err := fromImage(path, h, data)
	if err != nil {
		return nil, err
	}
	if namesPath == "" {
		base := strings.TrimSuffix(path, ".gz")
		if _, err := os.Stat(base + ".txt"); err == nil {
			namesPath = base + ".txt"
		}
	}
	if namesPath != "" {
		f, err := os.Open(namesPath)
		if err != nil {
			return nil, fmt.Errorf("atlas names: %w", err)
		}
		defer f.Close()
		if err := a.readNames(f, namesPath); err != nil {
			return nil, err
		}
	}
	return a, nil
}

// LoadFS reads an atlas embedded in a file system (assets.Atlas): the label image at image and
// its "index name" list at names ("" = none). The image is read in place (nifti.ReadImageFS):
// a copy in a temporary file was left behind when the process was killed during the read.
func LoadFS(fsys fs.FS, image, names string) (*Atlas, error) {
	h, data, err := nifti.ReadImageFS(fsys, image)
	if err != nil {
		return nil, fmt.Errorf("atlas %s: %w", image, err)
	}
	a, err := fromImage(image, h, data)
	if err != nil {
		return nil, err
	}
	if names != "" {
		f, err := fsys.Open(names)
		if err != nil {
			return nil, fmt.Errorf("atlas names: %w", err)
		}
		defer f.Close()
		if err := a.readNames(f, names); err != nil {
			return nil, err
		}
	}
	return a, nil
}

// fromImage checks a label image and wraps it.
func fromImage(path string, h nifti.Header, data []float32) (*Atlas, error) {
	if h.Volumes() != 1 {
		return nil, fmt.Errorf("atlas %s: %d volumes, want a 3D label image", path, h.Volumes())
	}
	for i, v := range data {
		if v != float32(math.Round(float64(v))) || v < 0 {
			return nil, fmt.Errorf("atlas %s: voxel %d holds %g; labels must be non-negative integers", path, i, v)
		}
	}
	a := &Atlas{Path: path, dims: [3]int{h.Nx(), h.Ny(), h.Nz()}, affine: h.Affine(), labels: data, Names: map[int]string{}, Space: h.SformCode}
	if a.Space == 0 {
		a.Space = h.QformCode
	}
	if _, err := scan.WorldToVoxel(a.affine, [3]float64{}); err != nil {
		return nil, fmt.Errorf("atlas %s: %w", path, err)
	}
	return a, nil
}

func (a *Atlas) readNames(f io.Reader, path string) error {
	sc := bufio.NewScanner(f)
	for line := 1; sc.Scan(); line++ {
		t := strings.TrimSpace(sc.Text())
		if t == "" || strings.HasPrefix(t, "#") {
			continue
		}
		fields := strings.Fields(t)
		if line == 1 && strings.EqualFold(fields[0], "index") {
			continue // a BIDS _dseg.tsv / nilearn-style table's header: index, name, …
		}
		if tab := strings.Split(t, "\t"); len(tab) >= 2 && strings.TrimSpace(tab[1]) != "" {
			fields = []string{strings.TrimSpace(tab[0]), strings.TrimSpace(tab[1])} // TSV: names may hold spaces
		}
		id, err := strconv.Atoi(fields[0])
		if err != nil || len(fields) < 2 {
			return fmt.Errorf("atlas names %s:%d: want \"index name\", got %q", path, line, t)
		}
		a.Names[id] = fields[1]
	}
	if err := sc.Err(); err != nil {
		return fmt.Errorf("atlas names %s: %w", path, err)
	}
	return nil
}

// Region returns the label and name of the atlas voxel nearest to a world position; 0 and ""
// outside the atlas or its regions.
func (a *Atlas) Region(xyz [3]float64) (int, string) {
	v, err := scan.WorldToVoxel(a.affine, xyz)
	if err != nil {
		return 0, ""
	}
	var ijk [3]int
	for d := 0; d < 3; d++ {
		ijk[d] = int(math.Floor(v[d] + 0.5))
		if ijk[d] < 0 || ijk[d] >= a.dims[d] {
			return 0, ""
		}
	}
	id := int(a.labels[ijk[0]+a.dims[0]*(ijk[1]+a.dims[1]*ijk[2])])
	return id, a.Name(id)
}

// Resample returns the atlas's labels on another grid (dims, voxel → world affine), one value
// per grid voxel, i fastest: each voxel takes the label of the atlas voxel nearest to its
// centre, found through both affines (world = A_grid·ijk, atlas ijk = A_atlas⁻¹·world, composed
// once), 0 where the voxel falls outside the atlas.
func (a *Atlas) Resample(dims [3]int, affine [4][4]float64) ([]float32, error) {
	return a.resample(dims, affine, false)
}

// ResampleLikeNilearn is Resample as nilearn's resample_img(interpolation="nearest") does it
// through scipy.ndimage.affine_transform(order=0, mode="constant"): a voxel whose centre falls
// beyond the atlas's outermost voxel centres (atlas coordinate < 0 or > n − 1, not merely
// outside the voxels' extent) takes 0. NiftiLabelsMasker's region series depend on it at the
// atlas's border.
func (a *Atlas) ResampleLikeNilearn(dims [3]int, affine [4][4]float64) ([]float32, error) {
	return a.resample(dims, affine, true)
}

func (a *Atlas) resample(dims [3]int, affine [4][4]float64, centres bool) ([]float32, error) {
	// Columns of the composed map: where the grid's origin and unit steps land in atlas voxels.
	o, err := scan.WorldToVoxel(a.affine, scan.VoxelToWorld(affine, [3]float64{}))
	if err != nil {
		return nil, fmt.Errorf("atlas %s: %w", a.Path, err)
	}
	var step [3][3]float64
	for ax := 0; ax < 3; ax++ {
		var e [3]float64
		e[ax] = 1
		p, err := scan.WorldToVoxel(a.affine, scan.VoxelToWorld(affine, e))
		if err != nil {
			return nil, fmt.Errorf("atlas %s: %w", a.Path, err)
		}
		for d := 0; d < 3; d++ {
			step[ax][d] = p[d] - o[d]
		}
	}
	out := make([]float32, dims[0]*dims[1]*dims[2])
	f := 0
	for k := 0; k < dims[2]; k++ {
		for j := 0; j < dims[1]; j++ {
			for i := 0; i < dims[0]; i++ {
				var ijk [3]int
				in := true
				for d := 0; d < 3; d++ {
					x := o[d] + float64(i)*step[0][d] + float64(j)*step[1][d] + float64(k)*step[2][d]
					ijk[d] = int(math.Floor(x + 0.5))
					in = in && ijk[d] >= 0 && ijk[d] < a.dims[d]
					if centres {
						in = in && x >= -1e-6 && x <= float64(a.dims[d]-1)+1e-6
					}
				}
				if in {
					out[f] = a.labels[ijk[0]+a.dims[0]*(ijk[1]+a.dims[1]*ijk[2])]
				}
				f++
			}
		}
	}
	return out, nil
}

// Name returns the name of label id ("region N" for a label without one; "" for 0).
func (a *Atlas) Name(id int) string {
	if id == 0 {
		return ""
	}
	if n, ok := a.Names[id]; ok {
		return n
	}
	return "region " + strconv.Itoa(id)
}

// SameGrid reports whether the atlas lies on the given grid (same size, affines within 1 µm):
// then no resampling is needed.
func (a *Atlas) SameGrid(dims [3]int, affine [4][4]float64) bool {
	if a.dims != dims {
		return false
	}
	for r := 0; r < 3; r++ {
		for c := 0; c < 4; c++ {
			if math.Abs(a.affine[r][c]-affine[r][c]) > 1e-3 {
				return false
			}
		}
	}
	return true
}

// IDs returns the labels present in the image (non-zero), in increasing order.
func (a *Atlas) IDs() []int {
	seen := map[int]bool{}
	for _, v := range a.labels {
		if v != 0 {
			seen[int(v)] = true
		}
	}
	ids := make([]int, 0, len(seen))
	for id := range seen {
		ids = append(ids, id)
	}
	sort.Ints(ids)
	return ids
}

// CheckNames reports a names table that does not match the image: labels in the image it does
// not name, or names of labels the image does not hold (at most 10 of each listed). Without a
// table (no names read) there is nothing to match.
func (a *Atlas) CheckNames(namesPath string) error {
	if len(a.Names) == 0 {
		return nil
	}
	ids := a.IDs()
	in := map[int]bool{}
	var unnamed, absent []string
	for _, id := range ids {
		in[id] = true
		if _, ok := a.Names[id]; !ok {
			unnamed = append(unnamed, strconv.Itoa(id))
		}
	}
	for id := range a.Names {
		if !in[id] {
			absent = append(absent, strconv.Itoa(id))
		}
	}
	sort.Slice(absent, func(i, j int) bool { x, _ := strconv.Atoi(absent[i]); y, _ := strconv.Atoi(absent[j]); return x < y })
	if len(unnamed) == 0 && len(absent) == 0 {
		return nil
	}
	cut := func(l []string) string {
		if len(l) > 10 {
			return strings.Join(l[:10], ", ") + fmt.Sprintf(" and %d more", len(l)-10)
		}
		return strings.Join(l, ", ")
	}
	var parts []string
	if len(unnamed) > 0 {
		parts = append(parts, fmt.Sprintf("image labels it does not name: %s", cut(unnamed)))
	}
	if len(absent) > 0 {
		parts = append(parts, fmt.Sprintf("names for labels the image does not hold: %s", cut(absent)))
	}
	return fmt.Errorf("atlas labels table %s does not match the image %s: %s", namesPath, a.Path, strings.Join(parts, "; "))
}
