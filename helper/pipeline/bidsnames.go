package pipeline

import (
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/hubscope/hubscope/helper/bids/derivatives"
	"github.com/hubscope/hubscope/helper/bundle"
	"github.com/hubscope/hubscope/helper/scan"
	"github.com/hubscope/hubscope/ipc/schema"
	"github.com/hubscope/hubscope/ipc/settings"
)

// bidsEntities are the input's BIDS entities for --bids-names (docs/bundle.md, "BIDS names"),
// checked before any work: the demo, a group mean and a scan without a BIDS name are refused.
func bidsEntities(cfg Config, given string) ([]derivatives.Entity, error) {
	switch {
	case cfg.Demo:
		return nil, fmt.Errorf("--bids-names: the demo phantom has no BIDS name; give a BIDS-named scan (sub-<label>_task-<label>_bold.nii.gz)")
	case cfg.Group != nil:
		return nil, fmt.Errorf("--bids-names: a group-mean network has no single input to name it after")
	}
	ents, err := derivatives.SourceEntities(given)
	if err != nil {
		return nil, fmt.Errorf("--bids-names: %w", err)
	}
	return ents, nil
}

// mapInfo says what each nodal map is and its units, for the BIDS sidecars.
var mapInfo = map[string][2]string{
	"degree":          {"degree: the number of links of each node", "links"},
	"strength":        {"strength: the sum of the connection values of each node's links", "connection value (correlation)"},
	"hubs":            {"hub mask: 1 where degree > mean + hub_sd·SD of the degrees", "binary"},
	"hub_z":           {"degree z-score: (degree − mean) / SD over the nodes", "SD"},
	"clustering":      {"local clustering coefficient (zero for nodes of degree < 2)", "unitless, 0 to 1"},
	"efficiency":      {"local efficiency: global efficiency of each node's neighbourhood", "unitless, 0 to 1"},
	"eigenvector":     {"eigenvector centrality (unit Euclidean norm)", "unitless"},
	"betweenness":     {"betweenness centrality: shortest paths through each node", "paths"},
	"modules":         {"Leiden modules: 1 = the largest module, 0 = outside the mask", "label"},
	"participation":   {"participation coefficient of each node over the Leiden modules", "unitless, 0 to 1"},
	"within_module_z": {"within-module degree z-score over the Leiden modules", "SD"},
}

// bidsLabel is a bundle file's base name as a BIDS label: "within_module_z" → "withinModuleZ".
func bidsLabel(name string) string {
	parts := strings.Split(name, "_")
	for i := 1; i < len(parts); i++ {
		if parts[i] != "" {
			parts[i] = strings.ToUpper(parts[i][:1]) + parts[i][1:]
		}
	}
	return strings.Join(parts, "")
}

// writeBIDSNames adds the BIDS-derivatives view of the staged bundle: dataset_description.json
// at its root and, under sub-<label>/[ses-<label>/]func/, a copy of each result under a name
// with the input's entities (docs/bundle.md, "BIDS names"), with a JSON sidecar per name stem
// (what it is, units, threshold, software and version, source; BIDS's inheritance principle
// lets one sidecar describe the files that differ only by extension):
//
//   - each nodal map as <entities>_desc-<map>_map.nii.gz;
//   - modules.nii.gz and its lookup table modules_dseg.tsv as <entities>_desc-modules_dseg.nii.gz
//     and .tsv (BIDS's discrete segmentation with its look-up table);
//   - the network as <entities>_relmat.npz, and its exports network.graphml, network.gexf and
//     BrainNet's network.edge as <entities>_relmat.graphml, .gexf, .edge;
//   - nodes.tsv and BrainNet's network.node as <entities>_nodes.tsv, .node; hubs.tsv and
//     hubs.node as <entities>_desc-hubs_nodes.tsv, .node, and hubs.edge and hub_links.tsv as
//     <entities>_desc-hubs_relmat.edge, .tsv;
//   - series.npy (--keep-series) as <entities>_timeseries.npy, and for a region network its
//     region series as <entities>_timeseries.tsv (one column per region, as nilearn's
//     NiftiLabelsMasker gives them; rows are time points).
func writeBIDSNames(w *bundle.Writer, cfg Config, ents []derivatives.Entity, given string, maps []nodeMap, s *scan.Scan) error {
	p := w.Path("dataset_description.json")
	if p == "" {
		return fmt.Errorf("bundle %s: dataset_description.json", w.Dir())
	}
	if err := derivatives.WriteDescription(filepath.Dir(p), schema.AppName, schema.Version, ""); err != nil {
		return fmt.Errorf("bundle %s: %w", w.Dir(), err)
	}
	dir := filepath.ToSlash(derivatives.EntityDir(ents))
	settingsMap := cfg.BundleSettings()
	threshold := map[string]any{settings.KeyMode: cfg.Mode}
	for _, k := range []string{settings.KeyDensity, settings.KeyR, settings.KeyAlpha, settings.KeyCorrection, settings.KeyKNN, "abs"} {
		if v, ok := settingsMap[k]; ok {
			threshold[k] = v
		}
	}
	common := func(desc, units string) map[string]any {
		return map[string]any{
			"Description":     desc,
			"Units":           units,
			"Measure":         cfg.Measure,
			"Threshold":       threshold,
			"Sources":         []string{"file://" + absPath(given)},
			"SoftwareName":    schema.AppName,
			"SoftwareVersion": schema.Version,
		}
	}
	exists := func(src string) bool { _, err := os.Stat(w.Path(src)); return err == nil }
	// stem writes the copies of one name stem (<entities>[_desc-<desc>]_<suffix>): each bundle
	// file in files (extension → bundle file) that exists, then the stem's sidecar. The
	// sidecar's "Files" maps each written extension to the bundle file it copies.
	// A file whose bundle name is "" is written by write instead of copied.
	type file struct {
		ext, src string
		write    func(name string) error
	}
	stem := func(desc, suffix string, files []file, side map[string]any) error {
		base, err := derivatives.EntityName(ents, desc, suffix, "")
		if err != nil {
			return err
		}
		copied := map[string]string{}
		for _, f := range files {
			if f.src != "" && !exists(f.src) {
				continue // not written (a region network has no grid maps, a large one no XML)
			}
			name := base + f.ext
			if err := derivatives.CheckName(name); err != nil {
				return err
			}
			if f.src == "" {
				if err := f.write(dir + "/" + name); err != nil {
					return err
				}
				copied[f.ext] = "written here only"
				continue
			}
			if err := copyInto(w, f.src, dir+"/"+name); err != nil {
				return err
			}
			copied[f.ext] = f.src
		}
		if len(copied) == 0 {
			return nil
		}
		side["Files"] = copied
		if formats, ok := side["Formats"].(map[string]string); ok {
			for ext := range formats {
				if _, ok := copied[ext]; !ok {
					delete(formats, ext)
				}
			}
		}
		return w.WriteJSON(dir+"/"+base+".json", side)
	}
	for _, mp := range maps {
		if mp.name == "modules" {
			continue // a segmentation, below
		}
		src := mp.name + ".nii.gz"
		info, ok := mapInfo[mp.name]
		if !ok {
			info = [2]string{mp.name + " map", "see docs/bundle.md"}
		}
		side := common("HubScope nodal map, "+info[0]+", of the thresholded functional network; bundle file "+src, info[1])
		if mp.name == "hubs" || mp.name == "hub_z" {
			side["HubSD"] = cfg.HubSD
		}
		if err := stem(bidsLabel(mp.name), "map", []file{{ext: ".nii.gz", src: src}}, side); err != nil {
			return err
		}
	}
	side := common("HubScope Leiden modules of the thresholded functional network as a label image (NIFTI_INTENT_LABEL): 1 = the largest module, 0 = outside the mask; the .tsv is its look-up table (index, name, color)", "label")
	if err := stem("modules", "dseg", []file{{ext: ".nii.gz", src: "modules.nii.gz"}, {ext: ".tsv", src: "modules_dseg.tsv"}}, side); err != nil {
		return err
	}

	layout := "scipy.sparse CSR, strict upper triangle: the full matrix is A + A.T"
	if cfg.SymmetricNPZ {
		layout = "scipy.sparse CSR, the whole symmetric matrix: both (i, j) and (j, i); do not add A.T"
	}
	side = common("HubScope functional network: the thresholded connection matrix (nodes: "+nodesWord(cfg)+"; rows in the order of the _nodes.tsv file)", "connection value (correlation)")
	side["Layout"] = layout
	side["Formats"] = map[string]string{
		".npz":     layout,
		".graphml": "GraphML (networkx.read_graphml, Gephi): node ids are the node numbers, each edge once with its weight; node attributes x, y, z (mm), module, degree, strength, hub, atlas_label",
		".gexf":    "GEXF 1.2 (networkx.read_gexf, Gephi): the same nodes, edges and attributes as the GraphML",
		".edge":    "BrainNet Viewer edge file: the symmetric N×N weight matrix as text, rows in node order",
	}
	if err := stem("", "relmat", []file{{ext: ".npz", src: "network.npz"}, {ext: ".graphml", src: "network.graphml"}, {ext: ".gexf", src: "network.gexf"}, {ext: ".edge", src: "network.edge"}}, side); err != nil {
		return err
	}
	side = common("HubScope links among the hubs: the .edge is BrainNet Viewer's edge file, the symmetric hubs × hubs weight matrix in the order of the _desc-hubs_nodes files (bundle hubs.edge); the .tsv lists the strongest links among them (hub_a, hub_b: rows of the hub table; node_a, node_b; weight; bundle hub_links.tsv)", "connection value (correlation)")
	if err := stem("hubs", "relmat", []file{{ext: ".edge", src: "hubs.edge"}, {ext: ".tsv", src: "hub_links.tsv"}}, side); err != nil {
		return err
	}
	side = common("HubScope nodes of the network, one row per node in the network's order: the .tsv with voxel indices and world coordinates (bundle nodes.tsv); the .node is BrainNet Viewer's node file (x y z colour = module, size = degree, label)", "mm")
	if err := stem("", "nodes", []file{{ext: ".tsv", src: "nodes.tsv"}, {ext: ".node", src: "network.node"}}, side); err != nil {
		return err
	}
	side = common("HubScope hubs (degree > mean + hub_sd·SD), most connected first: the .tsv with position, degree, strength, hub z and atlas label (bundle hubs.tsv); the .node is BrainNet Viewer's node file of the same hubs in the same order (x y z colour = module, size = degree, label)", "mm")
	side["HubSD"] = cfg.HubSD
	if err := stem("hubs", "nodes", []file{{ext: ".tsv", src: "hubs.tsv"}, {ext: ".node", src: "hubs.node"}}, side); err != nil {
		return err
	}

	// Series: the kept series as they are (series.npy), and a region network's region series
	// as nilearn's masker returns them (time points × regions, a header of region names).
	files := []file{{ext: ".npy", src: bundle.SeriesFile}}
	if cfg.Nodes == NodesRegions && s != nil && s.Labels != nil {
		files = append(files, file{ext: ".tsv", write: func(name string) error { return writeRegionSeries(w, name, s) }})
	}
	side = common("HubScope cleaned time series of the network's nodes: the .npy is nodes × time points (float32, rows in node order); the .tsv is time points × regions with the region names as header, as nilearn's NiftiLabelsMasker.fit_transform returns them", "signal units of the input scan")
	if s != nil && s.TR > 0 {
		side["RepetitionTime"] = s.TR
	}
	return stem("", "timeseries", files, side)
}

// copyInto copies the bundle file src to dst inside the bundle.
func copyInto(w *bundle.Writer, src, dst string) error {
	f, err := os.Open(w.Path(src))
	if err != nil {
		return fmt.Errorf("bundle %s: %s: %w", w.Dir(), src, err)
	}
	defer f.Close()
	return w.WriteFile(dst, func(out io.Writer) error { _, err := io.Copy(out, f); return err })
}

// writeRegionSeries writes a region scan's series as a TSV of time points × regions with the
// region names as its header (float32 values in Go's shortest form, which parse back exactly).
func writeRegionSeries(w *bundle.Writer, name string, s *scan.Scan) error {
	header := make([]string, s.N)
	for r := range header {
		header[r] = s.Labels[r]
	}
	return w.WriteTSV(name, header, func(emit func(...string) error) error {
		row := make([]string, s.N)
		for t := 0; t < s.L; t++ {
			for r := 0; r < s.N; r++ {
				row[r] = strconv.FormatFloat(float64(s.Data[r*s.L+t]), 'g', -1, 32)
			}
			if err := emit(row...); err != nil {
				return err
			}
		}
		return nil
	})
}

func nodesWord(cfg Config) string {
	if cfg.Nodes == NodesRegions {
		return "atlas regions"
	}
	return "masked voxels"
}

func absPath(p string) string {
	if a, err := filepath.Abs(p); err == nil {
		return filepath.ToSlash(a)
	}
	return p
}
