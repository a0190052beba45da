package daemon

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"time"

	"github.com/hubscope/hubscope/helper/bundle"
	"github.com/hubscope/hubscope/ipc"
	"github.com/hubscope/hubscope/ipc/schema"
	"github.com/hubscope/hubscope/ipc/settings"
)

// OpenBundle makes a finished results bundle written elsewhere (by hubscope-helper run, or
// another helper) a done job of this daemon, so that its summary, volumes and files are served
// as any job's (hubscope-helper report uses it). The bundle stays where it is and is only read.
// Its settings and times come from its provenance.json.
//
// A two-group comparison's folder (hubscope-helper compare: compare.json beside the t-, p- and
// q-maps) is opened as its reference bundle — one of the compared runs, on whose grid the maps
// lie — with the comparison's maps served beside that bundle's volumes (Summary.Comparison
// says so), so that the app draws them over the run's anatomy and names regions with its atlas.
func (d *Daemon) OpenBundle(ctx context.Context, dir string) (ipc.Job, error) {
	abs, err := filepath.Abs(dir)
	if err != nil {
		return ipc.Job{}, err
	}
	var overlay string
	var cmp *schema.Comparison
	if b, err := os.ReadFile(filepath.Join(abs, schema.ComparisonFile)); err == nil {
		var c schema.Comparison
		if err := json.Unmarshal(b, &c); err != nil {
			return ipc.Job{}, fmt.Errorf("%s: %s: %w", dir, schema.ComparisonFile, err)
		}
		if c.ReferenceBundle == "" {
			return ipc.Job{}, fmt.Errorf("%s: %s names no reference bundle", dir, schema.ComparisonFile)
		}
		overlay, cmp, abs = abs, &c, c.ReferenceBundle
	} else if !errors.Is(err, fs.ErrNotExist) {
		return ipc.Job{}, fmt.Errorf("%s: %w", dir, err)
	}
	if _, err := os.Stat(filepath.Join(abs, bundle.Marker)); err != nil {
		if cmp != nil {
			return ipc.Job{}, fmt.Errorf("%s: the comparison's reference bundle %s is not a finished HubScope results bundle (no %s)", dir, abs, bundle.Marker)
		}
		return ipc.Job{}, fmt.Errorf("%s: not a finished HubScope results bundle (no %s) nor a comparison (no %s)", dir, bundle.Marker, schema.ComparisonFile)
	}
	b, err := os.ReadFile(filepath.Join(abs, "provenance.json"))
	if err != nil {
		return ipc.Job{}, fmt.Errorf("%s: %w", dir, err)
	}
	var prov struct {
		schema.Provenance
		Parameters map[string]json.RawMessage `json:"parameters"`
	}
	if err := json.Unmarshal(b, &prov); err != nil {
		return ipc.Job{}, fmt.Errorf("%s: provenance.json: %w", dir, err)
	}
	// The run's settings are the parameters' settings keys (the rest are the command's own
	// options: scan, out, mask …).
	set := settings.Defaults()
	known := map[string]json.RawMessage{}
	for _, f := range set.Fields() {
		if v, ok := prov.Parameters[f.Key]; ok {
			known[f.Key] = v
		}
	}
	if kb, err := json.Marshal(known); err == nil {
		if err := json.Unmarshal(kb, &set); err != nil {
			return ipc.Job{}, fmt.Errorf("%s: provenance.json: parameters: %w", dir, err)
		}
	}
	name := filepath.Base(abs)
	if prov.Input.Path != "" {
		name = filepath.Base(prov.Input.Path)
	}
	if cmp != nil {
		name = fmt.Sprintf("%s: %s vs %s (%s)", filepath.Base(overlay), cmp.Groups[0], cmp.Groups[1], cmp.GroupColumn)
	} else if _, err := os.Stat(filepath.Join(abs, schema.GroupFile)); err == nil {
		name = filepath.Base(abs) // a group's provenance names its first subject's scan
	}
	h, err := readHeader(filepath.Join(abs, "degree.nii.gz"))
	if err != nil && !errors.Is(err, fs.ErrNotExist) {
		return ipc.Job{}, fmt.Errorf("%s: %w", dir, err)
	}
	created := prov.Created
	if created.IsZero() {
		created = time.Now().UTC()
	}
	id := newID(time.Now())
	r := record{Job: ipc.Job{ID: id, Name: name, State: ipc.JobDone, Settings: set, Submitted: created, Started: &created, Finished: &created, Backend: prov.Backend},
		Scan: prov.Input.Path, BundleDir: abs, OverlayDir: overlay, SformCode: h.SformCode, QformCode: h.QformCode}
	if err := os.Mkdir(d.jobDir(id), 0o700); err != nil {
		return ipc.Job{}, fmt.Errorf("job %s: %w", id, err)
	}
	if err := d.save(&r); err != nil {
		os.RemoveAll(d.jobDir(id))
		return ipc.Job{}, err
	}
	j := newJob(r, d.jobDir(id))
	j.ended()
	d.mu.Lock()
	d.jobs[id] = j
	d.mu.Unlock()
	return r.Job, nil
}
