package pipeline

import (
	"fmt"
	"io"
	"os"
	"path"
	"path/filepath"
	"strings"

	"github.com/hubscope/hubscope/helper/bids/derivatives"
	"github.com/hubscope/hubscope/helper/bundle"
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
// at its root and, under sub-<label>/[ses-<label>/]func/, a copy of each nodal map as
// <entities>_desc-<map>_map.nii.gz and of network.npz as <entities>_relmat.npz, each with a
// JSON sidecar (what it is, units, threshold, software and version, source).
func writeBIDSNames(w *bundle.Writer, cfg Config, ents []derivatives.Entity, given string, maps []nodeMap) error {
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
	copyAs := func(src, dst string, side map[string]any) error {
		name := path.Base(dst)
		if err := derivatives.CheckName(name); err != nil {
			return err
		}
		f, err := os.Open(w.Path(src))
		if err != nil {
			return fmt.Errorf("bundle %s: %s: %w", w.Dir(), src, err)
		}
		defer f.Close()
		if err := w.WriteFile(dst, func(out io.Writer) error { _, err := io.Copy(out, f); return err }); err != nil {
			return err
		}
		return w.WriteJSON(strings.TrimSuffix(dst, name)+name[:strings.IndexByte(name, '.')]+".json", side)
	}
	for _, mp := range maps {
		src := mp.name + ".nii.gz"
		if _, err := os.Stat(w.Path(src)); err != nil {
			continue // not written (a region network has no grid maps)
		}
		name, err := derivatives.EntityName(ents, bidsLabel(mp.name), "map", ".nii.gz")
		if err != nil {
			return err
		}
		info, ok := mapInfo[mp.name]
		if !ok {
			info = [2]string{mp.name + " map", "see docs/bundle.md"}
		}
		side := common("HubScope nodal map, "+info[0]+", of the thresholded functional network; bundle file "+src, info[1])
		if mp.name == "hubs" || mp.name == "hub_z" {
			side["HubSD"] = cfg.HubSD
		}
		if err := copyAs(src, dir+"/"+name, side); err != nil {
			return err
		}
	}
	name, err := derivatives.EntityName(ents, "", "relmat", ".npz")
	if err != nil {
		return err
	}
	layout := "scipy.sparse CSR, strict upper triangle: the full matrix is A + A.T"
	if cfg.SymmetricNPZ {
		layout = "scipy.sparse CSR, the whole symmetric matrix: both (i, j) and (j, i); do not add A.T"
	}
	side := common("HubScope functional network: the thresholded connection matrix (nodes: "+nodesWord(cfg)+"; rows in nodes.tsv order); bundle file network.npz", "connection value (correlation)")
	side["Layout"] = layout
	return copyAs("network.npz", dir+"/"+name, side)
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
