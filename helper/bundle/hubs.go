package bundle

import (
	"fmt"
	"strconv"

	"github.com/hubscope/hubscope/helper/scan"
)

// HubTableColumns are the columns of hubs.tsv for an image scan; atlas_label is added when
// atlas labels are given. For a plain matrix the voxel and coordinate columns are left out and
// its region label follows node. x_mm and hub_z keep the coordinates and the hub score apart
// (both would otherwise be called z).
var HubTableColumns = []string{"node", "i", "j", "k", "x_mm", "y_mm", "z_mm", "degree", "strength", "hub_z"}

// WriteHubTable writes hubs.tsv: one row per hub node, in the order given (strongest first, say),
// with its voxel, world position (mm), degree, strength and hub z-score taken from the per-node
// slices (length N). atlas, when not nil, holds one region name per hub ("" where the voxel
// lies outside every region).
func (w *Writer) WriteHubTable(s *scan.Scan, hubs []int, degree []int, strength, z []float64, atlas []string) error {
	return w.WriteHubTableMNI(s, hubs, degree, strength, z, atlas, nil)
}

// HubTableMNIColumns follow hub_z in hubs.tsv when the scan was registered to MNI space: each
// hub's MNI position (mm) through the registration (x_mm … keep the scan's own world position).
var HubTableMNIColumns = []string{"x_mni", "y_mni", "z_mni"}

// WriteHubTableMNI is WriteHubTable with each hub's MNI position (one per hub, in hubs' order)
// written as HubTableMNIColumns; mni nil leaves them out, as WriteHubTable does.
func (w *Writer) WriteHubTableMNI(s *scan.Scan, hubs []int, degree []int, strength, z []float64, atlas []string, mni [][3]float64) error {
	bad := func(format string, args ...any) error {
		return w.fail(fmt.Errorf("bundle %s: write hubs.tsv: %s", w.dir, fmt.Sprintf(format, args...)))
	}
	if s == nil {
		return bad("no scan")
	}
	if len(degree) != s.N || len(strength) != s.N || len(z) != s.N {
		return bad("%d degrees, %d strengths, %d z-scores for %d nodes", len(degree), len(strength), len(z), s.N)
	}
	if atlas != nil && len(atlas) != len(hubs) {
		return bad("%d atlas labels for %d hubs", len(atlas), len(hubs))
	}
	if mni != nil && (len(mni) != len(hubs) || s.IJK == nil) {
		return bad("%d MNI positions for %d hubs (image scans only)", len(mni), len(hubs))
	}
	image := s.IJK != nil
	if image && len(s.IJK) != s.N {
		return bad("%d voxel positions for %d nodes", len(s.IJK), s.N)
	}
	if !image && s.Labels != nil && len(s.Labels) != s.N {
		return bad("%d labels for %d nodes", len(s.Labels), s.N)
	}
	for _, v := range hubs {
		if v < 0 || v >= s.N {
			return bad("hub node %d outside 0…%d", v, s.N-1)
		}
	}
	header := HubTableColumns
	if !image {
		header = []string{"node"}
		if s.Labels != nil {
			header = append(header, "label")
		}
		header = append(header, "degree", "strength", "hub_z")
	}
	if mni != nil {
		header = append(append([]string(nil), header...), HubTableMNIColumns...)
	}
	if atlas != nil {
		header = append(append([]string(nil), header...), "atlas_label")
	}
	num := func(x float64) string { return strconv.FormatFloat(x, 'g', -1, 64) }
	return w.WriteTSV("hubs.tsv", header, func(emit func(...string) error) error {
		for h, v := range hubs {
			row := []string{strconv.Itoa(v)}
			if image {
				p, x := s.IJK[v], s.World(v)
				row = append(row, strconv.Itoa(int(p[0])), strconv.Itoa(int(p[1])), strconv.Itoa(int(p[2])),
					FormatMM(x[0]), FormatMM(x[1]), FormatMM(x[2]))
			} else if s.Labels != nil {
				row = append(row, s.Labels[v])
			}
			row = append(row, strconv.Itoa(degree[v]), num(strength[v]), num(z[v]))
			if mni != nil {
				row = append(row, FormatMM(mni[h][0]), FormatMM(mni[h][1]), FormatMM(mni[h][2]))
			}
			if atlas != nil {
				row = append(row, atlas[h])
			}
			if err := emit(row...); err != nil {
				return err
			}
		}
		return nil
	})
}
