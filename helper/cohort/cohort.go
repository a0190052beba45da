// Package cohort runs HubScope over every functional run of a BIDS dataset and gathers the
// results: one results bundle per run in a BIDS derivatives dataset (RunSubject, the per-subject
// step, callable on its own), resumable through a per-bundle marker of every file's size and
// SHA-256 and the settings it was made with, then a subjects × measures table joined with the
// dataset's participants.tsv (Table, the group step).
package cohort

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"runtime"
	"sort"
	"strings"
	"sync"

	"github.com/hubscope/hubscope/helper/bids/derivatives"
	"github.com/hubscope/hubscope/helper/bundle"
	"github.com/hubscope/hubscope/helper/norm"
	"github.com/hubscope/hubscope/helper/pipeline"
	"github.com/hubscope/hubscope/helper/progress"
	"github.com/hubscope/hubscope/ipc/schema"
)

// Options describe a cohort run.
type Options struct {
	BIDS, Out string // the BIDS dataset and the derivatives folder
	Task      string // only runs of this task ("" = all)
	Subject   string // only this subject's runs (the per-subject step); "" = all
	Jobs      int    // runs analysed at once (0: max(1, GOMAXPROCS/2))
	// GroupMean is the group-mean network's mean over the runs (GroupMeans): fisher-z ("" too),
	// r, or GroupMeanNone for none.
	GroupMean string
	// Config is every run's analysis (Scan, Out and Overwrite are set per run).
	Config pipeline.Config
}

// MarkerFile is the per-bundle completion marker, written last.
const MarkerFile = schema.CohortMarkerFile

// copies are the bundle files copied out of each run's bundle under BIDS names,
// <ID>_desc-<desc>_hubscope<ext>, with one JSON sidecar per desc (<ID>_desc-<desc>_hubscope.json,
// which by BIDS's inheritance principle describes every extension of that stem): the main
// maps, and the exports for other tools — the modules as a label image with its look-up table,
// the network in every format written (network.npz, GraphML, GEXF, BrainNet's .node/.edge),
// the hub table and the hubs' BrainNet files. A file the bundle lacks (metrics level, network
// size) is left out.
var copies = []struct{ src, desc, ext string }{
	{"degree.nii.gz", "degree", ".nii.gz"}, {"strength.nii.gz", "strength", ".nii.gz"}, {"hubs.nii.gz", "hubs", ".nii.gz"},
	{"hub_z.nii.gz", "hubz", ".nii.gz"}, {"clustering.nii.gz", "clustering", ".nii.gz"},
	{"modules.nii.gz", "modules", ".nii.gz"}, {"modules_dseg.tsv", "modules", ".tsv"},
	{"network.npz", "network", ".npz"}, {"network.graphml", "network", ".graphml"}, {"network.gexf", "network", ".gexf"},
	{"network.node", "network", ".node"}, {"network.edge", "network", ".edge"},
	{"hubs.tsv", "hubtable", ".tsv"}, {"hubs.node", "hubtable", ".node"}, {"hubs.edge", "hubtable", ".edge"},
	{"hub_links.tsv", "hublinks", ".tsv"},
}

// copyWhat says what each copied stem holds, for its sidecar.
var copyWhat = map[string]string{
	"modules":  "Leiden modules as a label image (NIFTI_INTENT_LABEL; 1 = the largest module, 0 = outside the mask) and its look-up table (index, name, color)",
	"network":  "the thresholded functional network: network.npz (scipy.sparse CSR; network.json in the bundle says whether upper triangle or symmetric), GraphML and GEXF (networkx, Gephi), BrainNet Viewer's .node and .edge (networks of at most 1,000 nodes)",
	"hubtable": "the hubs, most connected first: hubs.tsv, BrainNet Viewer's node file of the hubs and the edge matrix among them (at most 1,000 hubs)",
	"hublinks": "the 2,000 strongest links among the hubs (hub_links.tsv: hub_a, hub_b as rows of the hub table, node_a, node_b, weight)",
}

// Status of one run.
type Status struct {
	Run    derivatives.Run
	Bundle string
	State  string // "done", "skipped" (complete and matching), "failed"
	Reason string // why it ran again, or why it failed
	Err    error
}

// Marker is cohort_complete.json (schema.CohortMarker).
type Marker = schema.CohortMarker

// Digest is a file's size and SHA-256 (schema.CohortDigest).
type Digest = schema.CohortDigest

// Settings is the part of a configuration that decides a bundle's content (pipeline.Config.Settings).
func Settings(cfg pipeline.Config) map[string]any { return cfg.BundleSettings() }

// Diff names the settings that differ between a and b, "key: a → b", sorted.
func Diff(a, b map[string]any) []string { return norm.Diff(a, b) }

// BundleDir is the run's results bundle inside the derivatives folder.
func BundleDir(out string, r derivatives.Run) string {
	return filepath.Join(out, r.Dir(), r.ID()+"_hubscope")
}

// Runs lists the dataset's runs that opt selects; a --subject that matches none is an error.
func Runs(opt Options) ([]derivatives.Run, error) {
	if opt.Subject != "" {
		if err := derivatives.ValidLabel("subject", strings.TrimPrefix(opt.Subject, "sub-")); err != nil {
			return nil, err
		}
	}
	runs, err := derivatives.Find(opt.BIDS, opt.Task)
	if err != nil {
		return nil, err
	}
	if opt.Subject == "" {
		return runs, nil
	}
	var sel []derivatives.Run
	for _, r := range runs {
		if r.Subject == strings.TrimPrefix(opt.Subject, "sub-") {
			sel = append(sel, r)
		}
	}
	if len(sel) == 0 {
		return nil, fmt.Errorf("BIDS dataset %s: no runs of sub-%s", opt.BIDS, strings.TrimPrefix(opt.Subject, "sub-"))
	}
	return sel, nil
}

// Run analyses every selected run (Jobs at a time; a failed run is reported and the others go
// on), writes the derivatives' dataset_description.json and returns each run's status.
func Run(ctx context.Context, opt Options, rep progress.Reporter) ([]Status, error) {
	rep = progress.OrDiscard(rep)
	runs, err := Runs(opt)
	if err != nil {
		return nil, err
	}
	if err := os.MkdirAll(opt.Out, 0o755); err != nil {
		return nil, err
	}
	src, _ := filepath.Abs(opt.BIDS)
	if err := derivatives.WriteDescription(opt.Out, schema.AppName, schema.Version, src); err != nil {
		return nil, err
	}
	jobs := opt.Jobs
	if jobs <= 0 {
		jobs = max(1, runtime.GOMAXPROCS(0)/2)
	}
	st := make([]Status, len(runs))
	next := make(chan int)
	var wg sync.WaitGroup
	var mu sync.Mutex
	rep.Start("cohort", int64(len(runs)))
	for w := 0; w < jobs; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range next {
				st[i] = RunSubject(ctx, opt, runs[i])
				mu.Lock()
				s := st[i]
				switch s.State {
				case "failed":
					rep.Note(fmt.Sprintf("%s failed: %v", s.Run.ID(), s.Err))
				case "skipped":
					rep.Note(fmt.Sprintf("%s: complete bundle with the same settings, skipped", s.Run.ID()))
				default:
					if s.Reason != "" {
						rep.Note(fmt.Sprintf("%s: analysed again (%s)", s.Run.ID(), s.Reason))
					}
				}
				rep.Add(1)
				mu.Unlock()
			}
		}()
	}
	for i := range runs {
		if ctx.Err() != nil {
			break
		}
		next <- i
	}
	close(next)
	wg.Wait()
	return st, ctx.Err()
}

// RunSubject is the per-subject step: it skips a run whose bundle is complete (marker present,
// every listed file of the listed size and SHA-256) and was made from the same input with the
// same settings; otherwise it analyses the run, copies the main maps and exports out under BIDS names with
// JSON sidecars, and writes the marker last.
func RunSubject(ctx context.Context, opt Options, r derivatives.Run) Status {
	s := Status{Run: r, Bundle: BundleDir(opt.Out, r)}
	fail := func(err error) Status {
		s.State, s.Err = "failed", err
		return s
	}
	cfg := opt.Config
	cfg.Scan, cfg.Out, cfg.Overwrite = r.Path, s.Bundle, true
	settings := Settings(cfg)
	in, err := bundle.DescribeInput(r.Path)
	if err != nil {
		return fail(err)
	}
	funcDir := filepath.Join(opt.Out, r.Dir())
	reason, ok := checkMarker(funcDir, s.Bundle, in, settings)
	if ok {
		s.State = "skipped"
		return s
	}
	s.Reason = reason
	if err := os.MkdirAll(funcDir, 0o755); err != nil {
		return fail(err)
	}
	os.Remove(filepath.Join(s.Bundle, MarkerFile))
	// Copies from an earlier analysis of this run go first, so none outlives its bundle.
	if old, _ := filepath.Glob(filepath.Join(funcDir, r.ID()+"_desc-*_hubscope.*")); len(old) > 0 {
		for _, f := range old {
			os.Remove(f)
		}
	}
	if _, err := pipeline.Run(ctx, cfg, nil); err != nil {
		return fail(err)
	}
	m := Marker{Software: schema.AppName, Version: schema.Version, Input: in, Settings: settings, Files: map[string]Digest{}}
	sides := map[string]map[string]string{} // desc → extension → bundle file, in copies' order
	var order []string
	for _, c := range copies {
		srcPath := filepath.Join(s.Bundle, c.src)
		if _, err := os.Stat(srcPath); err != nil {
			continue // not written at this metrics level or network size
		}
		name, err := r.Name(c.desc, "hubscope", c.ext)
		if err != nil {
			return fail(err)
		}
		if err := copyFile(filepath.Join(funcDir, name), srcPath); err != nil {
			return fail(err)
		}
		if sides[c.desc] == nil {
			sides[c.desc] = map[string]string{}
			order = append(order, c.desc)
		}
		sides[c.desc][c.ext] = c.src
	}
	for _, desc := range order {
		name, _ := r.Name(desc, "hubscope", ".json")
		what, ok := copyWhat[desc]
		if !ok {
			what = "nodal " + desc + " map of the voxel-wise functional network"
		}
		sj, _ := json.MarshalIndent(schema.CohortCopySidecar{
			Description: "HubScope " + what,
			Files:       sides[desc],
			Settings:    settings,
			Sources:     []string{"bids::" + filepath.ToSlash(filepath.Join(r.Dir(), filepath.Base(r.Path)))},
		}, "", "  ")
		if err := os.WriteFile(filepath.Join(funcDir, name), append(sj, '\n'), 0o644); err != nil {
			return fail(err)
		}
	}
	// Every file of the bundle and the copies, by size and SHA-256.
	var files []string
	filepath.Walk(s.Bundle, func(p string, fi os.FileInfo, err error) error {
		if err == nil && fi.Mode().IsRegular() {
			files = append(files, p)
		}
		return nil
	})
	ents, _ := os.ReadDir(funcDir)
	for _, e := range ents {
		if strings.HasPrefix(e.Name(), r.ID()+"_desc-") && e.Type().IsRegular() {
			files = append(files, filepath.Join(funcDir, e.Name()))
		}
	}
	if err := writeMarker(&m, s.Bundle, funcDir, files); err != nil {
		return fail(err)
	}
	s.State = "done"
	return s
}

// writeMarker records each file's digest in m under its path relative to root, then writes m
// into dir as MarkerFile through a temporary file, so a marker is either whole or absent.
func writeMarker(m *Marker, dir, root string, files []string) error {
	for _, p := range files {
		d, err := digest(p)
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(root, p)
		m.Files[filepath.ToSlash(rel)] = d
	}
	b, _ := json.MarshalIndent(m, "", "  ")
	tmp := filepath.Join(dir, "."+MarkerFile+".tmp")
	if err := os.WriteFile(tmp, append(b, '\n'), 0o644); err != nil {
		return err
	}
	return os.Rename(tmp, filepath.Join(dir, MarkerFile))
}

// checkMarker says whether the bundle is complete and made from in with settings; if not, why.
func checkMarker(funcDir, dir string, in bundle.Input, settings map[string]any) (string, bool) {
	b, err := os.ReadFile(filepath.Join(dir, MarkerFile))
	if err != nil {
		if _, e := os.Stat(dir); e == nil {
			return "bundle incomplete: no completion marker", false
		}
		return "", false
	}
	var m Marker
	if err := json.Unmarshal(b, &m); err != nil {
		return "completion marker unreadable", false
	}
	if m.Input.SHA256 != in.SHA256 || m.Input.Bytes != in.Bytes {
		return "the scan changed", false
	}
	if d := Diff(m.Settings, settings); len(d) > 0 {
		return "settings changed: " + strings.Join(d, "; "), false
	}
	return checkFiles(funcDir, m)
}

// VerifyBundle says whether a run's bundle is complete as its marker records it: the marker
// is there and every file it lists has the recorded size and SHA-256 (the group and table
// steps check this before they count a run); if not, why.
func VerifyBundle(out string, r derivatives.Run) (string, bool) {
	dir := BundleDir(out, r)
	b, err := os.ReadFile(filepath.Join(dir, MarkerFile))
	if err != nil {
		return "no completion marker", false
	}
	var m Marker
	if err := json.Unmarshal(b, &m); err != nil || len(m.Files) == 0 {
		return "completion marker unreadable", false
	}
	return checkFiles(filepath.Join(out, r.Dir()), m)
}

// checkFiles compares every file the marker lists with its recorded size and SHA-256, in
// name order so that the first difference named is always the same.
func checkFiles(funcDir string, m Marker) (string, bool) {
	rels := make([]string, 0, len(m.Files))
	for rel := range m.Files {
		rels = append(rels, rel)
	}
	sort.Strings(rels)
	for _, rel := range rels {
		want := m.Files[rel]
		got, err := digest(filepath.Join(funcDir, filepath.FromSlash(rel)))
		if err != nil {
			return rel + " missing", false
		}
		if got != want {
			return rel + " differs from its recorded size or SHA-256", false
		}
	}
	return "", true
}

func digest(path string) (Digest, error) {
	f, err := os.Open(path)
	if err != nil {
		return Digest{}, err
	}
	defer f.Close()
	h := sha256.New()
	n, err := io.Copy(h, f)
	if err != nil {
		return Digest{}, fmt.Errorf("%s: %w", path, err)
	}
	return Digest{Bytes: n, SHA256: hex.EncodeToString(h.Sum(nil))}, nil
}

func copyFile(dst, src string) error {
	in, err := os.Open(src)
	if err != nil {
		return err
	}
	defer in.Close()
	tmp := dst + ".tmp"
	out, err := os.Create(tmp)
	if err != nil {
		return err
	}
	if _, err := io.Copy(out, in); err != nil {
		out.Close()
		os.Remove(tmp)
		return err
	}
	if err := out.Close(); err != nil {
		os.Remove(tmp)
		return err
	}
	return os.Rename(tmp, dst)
}

// Failed returns an error listing the failed runs, or nil.
func Failed(st []Status) error {
	var bad []string
	for _, s := range st {
		if s.State == "failed" {
			bad = append(bad, fmt.Sprintf("%s (%v)", s.Run.ID(), s.Err))
		}
	}
	if len(bad) == 0 {
		return nil
	}
	return fmt.Errorf("%d of %d runs failed: %s", len(bad), len(st), strings.Join(bad, "; "))
}
