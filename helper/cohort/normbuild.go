package cohort

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/hubscope/hubscope/helper/bids/derivatives"
	"github.com/hubscope/hubscope/helper/norm"
	"github.com/hubscope/hubscope/helper/sweep"
	"github.com/hubscope/hubscope/ipc/schema"
)

// NormOptions describe a normative folder built from a cohort's derivatives.
type NormOptions struct {
	Deriv, Out  string
	GroupColumn string   // with Group: only the runs whose participants have this value
	Group       string   // e.g. control
	Maps        []string // nodal maps (default degree, strength and, where every bundle has it, clustering)
}

// BuildNorm writes the normative folder from the runs of measures.tsv (optionally one group):
// every run's bundle must be complete and made with the same settings (the differences are
// named otherwise); the settings are recorded so that a patient's run can be held to them.
func BuildNorm(opt NormOptions) (*norm.Info, error) {
	tab, err := ReadTable(opt.Deriv)
	if err != nil {
		return nil, err
	}
	if opt.Group != "" {
		found := false
		for _, c := range tab.Columns {
			found = found || c == opt.GroupColumn
		}
		if !found {
			return nil, fmt.Errorf("%s has no column %q", tab.Path, opt.GroupColumn)
		}
	}
	var ids []string
	var settings map[string]any
	var first string
	for _, r := range tab.Rows {
		if opt.Group != "" && r[opt.GroupColumn] != opt.Group {
			continue
		}
		run, err := derivatives.ParseID(r["run"])
		if err != nil {
			return nil, err
		}
		b, err := os.ReadFile(filepath.Join(BundleDir(opt.Deriv, run), MarkerFile))
		if err != nil {
			return nil, fmt.Errorf("%s: no complete bundle (%v)", r["run"], err)
		}
		var m Marker
		if err := json.Unmarshal(b, &m); err != nil {
			return nil, fmt.Errorf("%s: completion marker: %w", r["run"], err)
		}
		if settings == nil {
			settings, first = m.Settings, r["run"]
		} else if d := norm.Diff(settings, m.Settings); len(d) > 0 {
			return nil, fmt.Errorf("%s was analysed with other settings than %s: %s", r["run"], first, strings.Join(d, "; "))
		}
		ids = append(ids, r["run"])
	}
	if len(ids) < norm.MinSubjects {
		return nil, fmt.Errorf("%s: %d run(s) selected; a normative cohort needs at least %d", tab.Path, len(ids), norm.MinSubjects)
	}
	maps := opt.Maps
	if len(maps) == 0 {
		maps = []string{"degree", "strength"}
		all := true
		for _, id := range ids {
			run, _ := derivatives.ParseID(id)
			if _, err := os.Stat(filepath.Join(BundleDir(opt.Deriv, run), "clustering.nii.gz")); err != nil {
				all = false
			}
		}
		if all {
			maps = append(maps, "clustering")
		}
		// A cohort analysed with a sweep (the same for every run: the settings agree) has
		// every threshold's degree map.
		run, _ := derivatives.ParseID(ids[0])
		ents, _ := os.ReadDir(BundleDir(opt.Deriv, run))
		for _, e := range ents {
			if name, ok := strings.CutSuffix(e.Name(), ".nii.gz"); ok && strings.HasPrefix(name, sweep.DegreeMapPrefix) {
				maps = append(maps, name)
			}
		}
	}
	nd, err := LoadNodal(opt.Deriv, ids, maps)
	if err != nil {
		return nil, err
	}
	hubSD, _ := settings["hub_sd"].(float64)
	return norm.Build(opt.Out, norm.Input{Dims: nd.Dims, Affine: nd.Affine, IJK: nd.IJK, Values: nd.Values, Subjects: ids,
		Settings: settings, HubSD: hubSD, Software: schema.AppName, Version: schema.Version})
}
