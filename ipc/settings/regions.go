package settings

import "strings"

// Network nodes (Regions.Nodes, --nodes) and the embedded atlas's name (Regions.Atlas, --atlas).
const (
	NodesVoxels  = "voxels"  // the masked voxels (the default; "" is voxels too)
	NodesRegions = "regions" // the regions of Regions.Atlas, each the mean of its voxels' series
	AtlasAAL     = "aal"     // the embedded AAL atlas (Tzourio-Mazoyer et al. 2002)
)

// NodeKinds are the choices of Regions.Nodes, in the order help texts list them.
var NodeKinds = []string{NodesVoxels, NodesRegions}

// Regions is what the network's nodes are and which atlas names them: the masked voxels, or
// the regions of an atlas (ROI-to-ROI networks, each region's series the mean of its voxels'
// cleaned series, as nilearn's NiftiLabelsMasker extracts them; docs/algorithms.md). With
// voxel nodes the atlas only names the hubs' regions.
type Regions struct {
	// Nodes is "" or NodesVoxels, or NodesRegions (which needs Atlas).
	Nodes string `json:"nodes,omitempty"`
	// Atlas is a 3D label image on any grid (a file on the helper's disk), or AtlasAAL for the
	// embedded AAL; "" names the hubs with the embedded AAL when the scan lies in MNI space.
	Atlas string `json:"atlas,omitempty"`
	// AtlasNames is the atlas's region names: one "index name" per line, or a TSV with an
	// index, name header ("" = the atlas's .nii.txt beside it).
	AtlasNames string `json:"atlas_names,omitempty"`
}

func (g *Regions) fields() []Field {
	return []Field{
		{"nodes", "nodes", "NODES", "the network's nodes: voxels (default) or regions (the mean cleaned series of each --atlas region, as nilearn's NiftiLabelsMasker)", &g.Nodes},
		{"atlas", "atlas", "FILE", "label image naming the hubs' regions in hubs.tsv (e.g. /usr/share/mricron/templates/aal.nii.gz), or aal for the embedded AAL; with --nodes regions its regions are the nodes", &g.Atlas},
		{"atlas_names", "atlas-labels", "TSV", "the atlas's region names: a TSV with an index, name header, or one \"index name\" per line (default: the atlas's .nii.txt beside it)", &g.AtlasNames},
	}
}

func (g *Regions) defaults() {}

func (g *Regions) validate(s *Settings) error {
	if g.Nodes != "" {
		if err := s.oneOf("nodes", "kind of nodes", g.Nodes, NodeKinds); err != nil {
			return err
		}
	}
	if g.Nodes == NodesRegions && g.Atlas == "" {
		return s.Errorf("nodes", "regions needs an atlas: atlas (--atlas) LABELS.nii.gz or aal")
	}
	if g.AtlasNames != "" && g.Atlas == "" {
		return s.Errorf("atlas_names", "names the regions of an atlas: give the atlas too (atlas, --atlas FILE)")
	}
	if strings.TrimSpace(g.Atlas) != g.Atlas {
		return s.Errorf("atlas", "%q: leading or trailing space", g.Atlas)
	}
	return nil
}

// IsAAL reports whether Atlas names the embedded AAL.
func (g *Regions) IsAAL() bool { return strings.EqualFold(g.Atlas, AtlasAAL) }

// DiskPaths returns the JSON keys of the settings that name files on the machine that runs the
// analysis (the confounds table, an atlas file and its names), with their values: a request
// over the web transport may not name any (its client cannot know the helper's disk).
func (s *Settings) DiskPaths() map[string]string {
	out := map[string]string{}
	if s.Confounds != "" {
		out["confounds"] = s.Confounds
	}
	if s.Atlas != "" && !s.IsAAL() {
		out["atlas"] = s.Atlas
	}
	if s.AtlasNames != "" {
		out["atlas_names"] = s.AtlasNames
	}
	return out
}
