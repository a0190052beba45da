// Package atlas looks up the labelled region of a world (mm) position in an atlas image, such
// as AAL or AICHA from Debian's mricron-data, so that hub voxels can be named. The atlas may be
// on any grid: positions are mapped through its own affine to its nearest voxel.
package atlas

import (
	"bufio"
	"fmt"
	"math"
	"os"
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
}

// Load reads a 3D label image and its names. namesPath "" looks for the MRIcron convention
// beside the image (aal.nii.gz → aal.nii.txt); without a names file regions are called
// "region N". Names files hold one region per line: "index name [anything]", # for comments.
func Load(path, namesPath string) (*Atlas, error) {
	h, data, err := nifti.ReadImage(path)
	if err != nil {
		return nil, fmt.Errorf("atlas: %w", err)
	}
	if h.Volumes() != 1 {
		return nil, fmt.Errorf("atlas %s: %d volumes, want a 3D label image", path, h.Volumes())
	}
	for i, v := range data {
		if v != float32(math.Round(float64(v))) || v < 0 {
			return nil, fmt.Errorf("atlas %s: voxel %d holds %g; labels must be non-negative integers", path, i, v)
		}
	}
	a := &Atlas{Path: path, dims: [3]int{h.Nx(), h.Ny(), h.Nz()}, affine: h.Affine(), labels: data, Names: map[int]string{}}
	if _, err := scan.WorldToVoxel(a.affine, [3]float64{}); err != nil {
		return nil, fmt.Errorf("atlas %s: %w", path, err)
	}
	if namesPath == "" {
		base := strings.TrimSuffix(path, ".gz")
		if _, err := os.Stat(base + ".txt"); err == nil {
			namesPath = base + ".txt"
		}
	}
	if namesPath != "" {
		if err := a.readNames(namesPath); err != nil {
			return nil, err
		}
	}
	return a, nil
}

func (a *Atlas) readNames(path string) error {
	f, err := os.Open(path)
	if err != nil {
		return fmt.Errorf("atlas names: %w", err)
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for line := 1; sc.Scan(); line++ {
		t := strings.TrimSpace(sc.Text())
		if t == "" || strings.HasPrefix(t, "#") {
			continue
		}
		fields := strings.Fields(t)
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
	if id == 0 {
		return 0, ""
	}
	if n, ok := a.Names[id]; ok {
		return id, n
	}
	return id, "region " + strconv.Itoa(id)
}
