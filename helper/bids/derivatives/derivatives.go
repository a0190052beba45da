// Package derivatives holds HubScope's BIDS naming: the functional runs of a BIDS dataset
// (sub-<label>[/ses-<label>]/func/*_bold.nii[.gz]), its participants.tsv, and the names of the
// derivatives HubScope writes (sub-<label>[_ses-<label>]_task-<label>[_run-<index>]_desc-<label>_<suffix>.<ext>
// under sub-<label>/[ses-<label>/]func/), with a dataset_description.json of DatasetType
// "derivative" (BIDS specification 1.8, "Derived dataset and pipeline description"). Every label
// is validated before it reaches a path: BIDS labels are alphanumeric, so no shell or path
// character can pass.
package derivatives

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"

	"github.com/hubscope/hubscope/ipc/schema"
)

// ValidLabel reports a label that is not a BIDS label (letters and digits only, non-empty).
func ValidLabel(kind, label string) error {
	if label == "" {
		return fmt.Errorf("BIDS %s label is empty", kind)
	}
	for _, r := range label {
		if !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9') {
			return fmt.Errorf("BIDS %s label %q: only letters and digits are allowed (found %q)", kind, label, r)
		}
	}
	return nil
}

// Run is one functional run of a BIDS dataset, identified by its entities.
type Run struct {
	Subject, Session, Task, Acq, RunIndex string
	Path                                  string
}

// ID is the run's entities as a BIDS name prefix, "sub-01_ses-a_task-rest_run-1".
func (r Run) ID() string {
	parts := []string{"sub-" + r.Subject}
	for _, e := range [][2]string{{"ses", r.Session}, {"task", r.Task}, {"acq", r.Acq}, {"run", r.RunIndex}} {
		if e[1] != "" {
			parts = append(parts, e[0]+"-"+e[1])
		}
	}
	return strings.Join(parts, "_")
}

// Dir is the run's folder relative to a dataset root: sub-<label>[/ses-<label>]/func.
func (r Run) Dir() string {
	if r.Session != "" {
		return filepath.Join("sub-"+r.Subject, "ses-"+r.Session, "func")
	}
	return filepath.Join("sub-"+r.Subject, "func")
}

// Name is a derivative file name of the run: <ID>[_desc-<desc>]_<suffix><ext> (ext with its
// dot, e.g. ".nii.gz"). desc and suffix must be alphanumeric.
func (r Run) Name(desc, suffix, ext string) (string, error) {
	if err := ValidLabel("suffix", suffix); err != nil {
		return "", err
	}
	n := r.ID()
	if desc != "" {
		if err := ValidLabel("desc", desc); err != nil {
			return "", err
		}
		n += "_desc-" + desc
	}
	return n + "_" + suffix + ext, nil
}

// ParseID reads a run's entities back from its ID ("sub-01_ses-a_task-rest_run-1"),
// validating every label.
func ParseID(id string) (Run, error) {
	r, ok, err := parseName(id + "_bold.nii.gz")
	if !ok || err != nil {
		return Run{}, fmt.Errorf("run %q: %v", id, err)
	}
	return r, nil
}

// parseName reads the entities of a BOLD file name; ok is false for names that are not
// <entities>_bold.nii[.gz].
func parseName(base string) (Run, bool, error) {
	var stem string
	switch {
	case strings.HasSuffix(base, "_bold.nii.gz"):
		stem = strings.TrimSuffix(base, "_bold.nii.gz")
	case strings.HasSuffix(base, "_bold.nii"):
		stem = strings.TrimSuffix(base, "_bold.nii")
	default:
		return Run{}, false, nil
	}
	var r Run
	for _, kv := range strings.Split(stem, "_") {
		k, v, ok := strings.Cut(kv, "-")
		if !ok {
			return Run{}, true, fmt.Errorf("%s: entity %q is not key-label", base, kv)
		}
		if err := ValidLabel(k, v); err != nil {
			return Run{}, true, fmt.Errorf("%s: %w", base, err)
		}
		switch k {
		case "sub":
			r.Subject = v
		case "ses":
			r.Session = v
		case "task":
			r.Task = v
		case "acq":
			r.Acq = v
		case "run":
			r.RunIndex = v
		case "dir", "rec", "ce", "echo", "part", "space":
			// other entities of a BOLD name: not used to tell runs apart here
		default:
			return Run{}, true, fmt.Errorf("%s: unknown BIDS entity %q", base, k)
		}
	}
	if r.Subject == "" {
		return Run{}, true, fmt.Errorf("%s: no sub-<label> entity", base)
	}
	return r, true, nil
}

// Find lists the BOLD runs of the dataset at root (sub-*/func and sub-*/ses-*/func), sorted by
// ID, optionally only those of task (""= any). A folder or file whose labels are not BIDS
// labels is an error naming it.
func Find(root, task string) ([]Run, error) {
	ents, err := os.ReadDir(root)
	if err != nil {
		return nil, fmt.Errorf("BIDS dataset %s: %w", root, err)
	}
	var runs []Run
	scanFunc := func(dir, sub, ses string) error {
		files, err := os.ReadDir(dir)
		if err != nil {
			if errors.Is(err, os.ErrNotExist) {
				return nil
			}
			return err
		}
		for _, f := range files {
			r, ok, err := parseName(f.Name())
			if !ok {
				continue
			}
			if err != nil {
				return fmt.Errorf("%s: %w", dir, err)
			}
			if r.Subject != sub || r.Session != ses {
				return fmt.Errorf("%s: %s does not belong to sub-%s%s", dir, f.Name(), sub, map[bool]string{true: " ses-" + ses, false: ""}[ses != ""])
			}
			if task != "" && r.Task != task {
				continue
			}
			r.Path = filepath.Join(dir, f.Name())
			runs = append(runs, r)
		}
		return nil
	}
	for _, e := range ents {
		label, ok := strings.CutPrefix(e.Name(), "sub-")
		if !ok || !e.IsDir() {
			continue
		}
		if err := ValidLabel("subject", label); err != nil {
			return nil, fmt.Errorf("%s: %w", filepath.Join(root, e.Name()), err)
		}
		sdir := filepath.Join(root, e.Name())
		if err := scanFunc(filepath.Join(sdir, "func"), label, ""); err != nil {
			return nil, err
		}
		sess, _ := os.ReadDir(sdir)
		for _, s := range sess {
			ses, ok := strings.CutPrefix(s.Name(), "ses-")
			if !ok || !s.IsDir() {
				continue
			}
			if err := ValidLabel("session", ses); err != nil {
				return nil, fmt.Errorf("%s: %w", filepath.Join(sdir, s.Name()), err)
			}
			if err := scanFunc(filepath.Join(sdir, s.Name(), "func"), label, ses); err != nil {
				return nil, err
			}
		}
	}
	sort.Slice(runs, func(a, b int) bool { return runs[a].ID() < runs[b].ID() })
	if len(runs) == 0 {
		return nil, fmt.Errorf("BIDS dataset %s: no sub-*/func/*_bold.nii[.gz] runs%s", root, map[bool]string{true: " of task " + task, false: ""}[task != ""])
	}
	return runs, nil
}

// Participants is a participants.tsv: its columns and one row per participant_id.
type Participants struct {
	Path    string
	Columns []string // participant_id first
	Rows    map[string]map[string]string
	Order   []string // participant ids in file order
}

// ReadParticipants reads root/participants.tsv.
func ReadParticipants(root string) (*Participants, error) {
	path := filepath.Join(root, "participants.tsv")
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	lines := strings.Split(strings.TrimRight(strings.ReplaceAll(string(b), "\r\n", "\n"), "\n"), "\n")
	p := &Participants{Path: path, Columns: strings.Split(lines[0], "\t"), Rows: map[string]map[string]string{}}
	if p.Columns[0] != "participant_id" {
		return nil, fmt.Errorf("%s: the first column is %q, not participant_id", path, p.Columns[0])
	}
	for n, line := range lines[1:] {
		if strings.TrimSpace(line) == "" {
			continue
		}
		f := strings.Split(line, "\t")
		if len(f) != len(p.Columns) {
			return nil, fmt.Errorf("%s line %d: %d fields, the header has %d", path, n+2, len(f), len(p.Columns))
		}
		row := map[string]string{}
		for i, c := range p.Columns {
			row[c] = f[i]
		}
		id := f[0]
		if _, dup := p.Rows[id]; dup {
			return nil, fmt.Errorf("%s line %d: %s listed twice", path, n+2, id)
		}
		p.Rows[id] = row
		p.Order = append(p.Order, id)
	}
	return p, nil
}

// Has reports whether the table has the column.
func (p *Participants) Has(col string) bool {
	for _, c := range p.Columns {
		if c == col {
			return true
		}
	}
	return false
}

// WriteDescription writes dir/dataset_description.json of a derivative dataset generated by
// name version (BIDS: DatasetType "derivative", GeneratedBy), with the source dataset's path.
func WriteDescription(dir, name, version, source string) error {
	d := schema.DatasetDescription{
		BIDSVersion: "1.8.0",
		DatasetType: "derivative",
		GeneratedBy: []schema.GeneratedBy{{Name: name, Version: version}},
		Name:        name + " derivatives",
	}
	if source != "" {
		d.SourceDatasets = []schema.SourceDataset{{URL: "file://" + source}}
	}
	b, err := json.MarshalIndent(d, "", "  ")
	if err != nil {
		return err
	}
	return os.WriteFile(filepath.Join(dir, schema.DatasetDescriptionFile), append(b, '\n'), 0o644)
}
