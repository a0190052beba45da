package cohort

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"

	"github.com/hubscope/hubscope/helper/atlas"
	"github.com/hubscope/hubscope/helper/bids/derivatives"
	"github.com/hubscope/hubscope/helper/nifti"
	"github.com/hubscope/hubscope/ipc/schema"
)

// TableFile is the subjects × measures table in the derivatives folder.
const TableFile = "measures.tsv"

// Row is one run's line of the table.
type Row struct {
	Participant string
	Run         derivatives.Run
	Bundle      string
	Columns     map[string]string // participants.tsv's columns
	Measures    map[string]float64
}

// Collect reads every selected run's complete bundle (refusing, with the names, runs whose
// bundle is missing or incomplete) and joins participants.tsv (refusing a run whose
// participant it does not list).
func Collect(opt Options) ([]Row, *derivatives.Participants, error) {
	runs, err := Runs(opt)
	if err != nil {
		return nil, nil, err
	}
	parts, err := derivatives.ReadParticipants(opt.BIDS)
	if err != nil {
		return nil, nil, err
	}
	var atl *atlas.Atlas
	if opt.Config.Atlas != "" {
		if atl, err = atlas.Load(opt.Config.Atlas, opt.Config.AtlasNames); err != nil {
			return nil, nil, err
		}
	}
	var missing, unlisted []string
	var rows []Row
	for _, r := range runs {
		dir := BundleDir(opt.Out, r)
		// The marker's digests are checked, not just its presence: a truncated or edited
		// file makes the run count as missing (and the cohort step runs it again), never
		// silently enter the table.
		if reason, ok := VerifyBundle(opt.Out, r); !ok {
			missing = append(missing, r.ID()+" ("+reason+")")
			continue
		}
		pid := "sub-" + r.Subject
		cols, ok := parts.Rows[pid]
		if !ok {
			unlisted = append(unlisted, pid)
			continue
		}
		b, err := os.ReadFile(filepath.Join(dir, "metrics.json"))
		if err != nil {
			return nil, nil, err
		}
		var m map[string]any
		if err := json.Unmarshal(b, &m); err != nil {
			return nil, nil, fmt.Errorf("%s: %w", filepath.Join(dir, "metrics.json"), err)
		}
		meas := map[string]float64{}
		flatten("", m, meas)
		if atl != nil {
			if err := regionMeans(dir, atl, meas); err != nil {
				return nil, nil, err
			}
		}
		rows = append(rows, Row{Participant: pid, Run: r, Bundle: dir, Columns: cols, Measures: meas})
	}
	if len(missing) > 0 {
		return nil, nil, fmt.Errorf("%s: no complete bundle for %s (run the cohort step for them first)", opt.Out, strings.Join(missing, ", "))
	}
	if len(unlisted) > 0 {
		return nil, nil, fmt.Errorf("%s does not list %s", parts.Path, strings.Join(unlisted, ", "))
	}
	return rows, parts, nil
}

// regionMeans adds the mean degree and strength of the run's nodes in every atlas region as
// region_degree.<label> and region_strength.<label> (labels as in the atlas image).
func regionMeans(dir string, atl *atlas.Atlas, meas map[string]float64) error {
	ijk, err := readNodes(filepath.Join(dir, "nodes.tsv"))
	if err != nil {
		return err
	}
	for _, name := range []string{"degree", "strength"} {
		h, vol, err := nifti.ReadImage(filepath.Join(dir, name+".nii.gz"))
		if err != nil {
			return err
		}
		dims := [3]int{h.Nx(), h.Ny(), h.Nz()}
		labels, err := atl.Resample(dims, h.Affine())
		if err != nil {
			return err
		}
		sum, n := map[int]float64{}, map[int]int{}
		for _, v := range ijk {
			f := v[0] + dims[0]*(v[1]+dims[1]*v[2])
			if l := int(labels[f]); l != 0 {
				sum[l] += float64(vol[f])
				n[l]++
			}
		}
		for l, c := range n {
			meas[fmt.Sprintf("region_%s.%d", name, l)] = sum[l] / float64(c)
		}
	}
	return nil
}

// measureRoots are the parts of metrics.json that hold per-network numbers.
var measureRoots = map[string]bool{"network": true, "hubs": true, "global": true, "global_basic": true}

func flatten(prefix string, v any, out map[string]float64) {
	switch x := v.(type) {
	case map[string]any:
		for k, y := range x {
			if prefix == "" && !measureRoots[k] {
				continue
			}
			if k == "degree_distribution" || k == "distance_counts" {
				continue
			}
			flatten(prefix+k+".", y, out)
		}
	case float64:
		out[strings.TrimSuffix(prefix, ".")] = x
	case bool:
		// flags (abs, threshold_inclusive) are settings, not measures
	}
}

// WriteTable writes the table (participant_id, run, participants.tsv's columns, then every
// measure, sorted) as TableFile with a JSON sidecar describing the measure columns.
func WriteTable(opt Options, rows []Row, parts *derivatives.Participants) (string, error) {
	keys := map[string]bool{}
	for _, r := range rows {
		for k := range r.Measures {
			keys[k] = true
		}
	}
	var ms []string
	for k := range keys {
		ms = append(ms, k)
	}
	sort.Strings(ms)
	header := []string{"participant_id", "run"}
	header = append(header, parts.Columns[1:]...)
	header = append(header, ms...)
	var b strings.Builder
	b.WriteString(strings.Join(header, "\t") + "\n")
	for _, r := range rows {
		f := []string{r.Participant, r.Run.ID()}
		for _, c := range parts.Columns[1:] {
			f = append(f, r.Columns[c])
		}
		for _, k := range ms {
			if v, ok := r.Measures[k]; ok {
				f = append(f, strconv.FormatFloat(v, 'g', 10, 64))
			} else {
				f = append(f, "n/a")
			}
		}
		b.WriteString(strings.Join(f, "\t") + "\n")
	}
	path := filepath.Join(opt.Out, TableFile)
	if err := os.WriteFile(path+".tmp", []byte(b.String()), 0o644); err != nil {
		return "", err
	}
	if err := os.Rename(path+".tmp", path); err != nil {
		return "", err
	}
	side := schema.CohortTableSidecar{"run": {Description: "BIDS entities of the functional run"}}
	for _, k := range ms {
		desc := "metrics.json " + k + " of the run's results bundle"
		if rest, ok := strings.CutPrefix(k, "region_"); ok {
			m, l, _ := strings.Cut(rest, ".")
			desc = "mean nodal " + m + " of the run's nodes in atlas region " + l
		}
		side[k] = schema.CohortColumn{Description: desc}
	}
	sj, _ := json.MarshalIndent(side, "", "  ")
	return path, os.WriteFile(strings.TrimSuffix(path, ".tsv")+".json", append(sj, '\n'), 0o644)
}
