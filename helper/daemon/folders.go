package daemon

// Result folders for clients that see no paths (the browser app): the finished results
// folders under the daemon's roots — its own jobs' bundles and Options.OpenRoot (serve
// --open-root) — listed by ID (ipc.ResultFolder) and opened by that ID (JobRequest.OpenFolder),
// never by a path the client names.

import (
	"context"
	"encoding/json"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"

	"github.com/hubscope/hubscope/helper/bundle"
	"github.com/hubscope/hubscope/ipc"
	"github.com/hubscope/hubscope/ipc/schema"
)

// Bounds of the walk of the open root: deep enough for a cohort's derivatives
// (deriv/sub-01/ses-1/func/<run>_hubscope), and a listing a person can read.
const (
	folderDepth = 8
	folderLimit = 2000
)

// Folders lists the finished results folders under the daemon's roots, newest first: the
// bundles of its jobs that finished (their own bundle/ folders, not folders opened from
// elsewhere) and, under Options.OpenRoot, every results bundle (one scan's or a group's) and
// every two-group comparison whose reference bundle also lies there, and every cohort folder
// (measures.tsv; its tables through FolderTable). Symbolic links are not followed, and hidden
// folders are skipped.
func (d *Daemon) Folders(ctx context.Context) ([]ipc.ResultFolder, error) {
	var out []ipc.ResultFolder
	d.mu.Lock()
	type done struct{ id, name string }
	var jobs []done
	for id, j := range d.jobs {
		if j.rec.State == ipc.JobDone && j.rec.BundleDir == "" {
			jobs = append(jobs, done{id, j.rec.Name})
		}
	}
	d.mu.Unlock()
	for _, j := range jobs {
		dir := filepath.Join(d.jobDir(j.id), "bundle")
		if f, ok := resultFolder(dir); ok {
			f.ID, f.Root, f.Name = ipc.FolderRootJobs+"/"+j.id, ipc.FolderRootJobs, j.name
			out = append(out, f)
		}
	}
	if root := d.opt.OpenRoot; root != "" {
		found, err := walkResults(ctx, root)
		if err != nil {
			return nil, err
		}
		out = append(out, found...)
	}
	sort.SliceStable(out, func(a, b int) bool {
		if !out[a].Modified.Equal(out[b].Modified) {
			return out[a].Modified.After(out[b].Modified)
		}
		return out[a].ID < out[b].ID
	})
	return out, nil
}

// resultFolder says whether dir is a finished results folder, and of which kind.
func resultFolder(dir string) (ipc.ResultFolder, bool) {
	if fi, err := os.Lstat(filepath.Join(dir, bundle.Marker)); err == nil && fi.Mode().IsRegular() {
		f := ipc.ResultFolder{Kind: ipc.FolderBundle, Modified: fi.ModTime().UTC()}
		if _, err := os.Lstat(filepath.Join(dir, schema.GroupFile)); err == nil {
			f.Kind = ipc.FolderGroup
		}
		return f, true
	}
	if fi, err := os.Lstat(filepath.Join(dir, schema.ComparisonFile)); err == nil && fi.Mode().IsRegular() {
		return ipc.ResultFolder{Kind: ipc.FolderComparison, Modified: fi.ModTime().UTC()}, true
	}
	return ipc.ResultFolder{}, false
}

// walkResults finds the result folders under root (not inside a bundle: its own folders are
// its parts).
func walkResults(ctx context.Context, root string) ([]ipc.ResultFolder, error) {
	var out []ipc.ResultFolder
	err := filepath.WalkDir(root, func(p string, e fs.DirEntry, err error) error {
		if err != nil {
			if p == root {
				return err
			}
			return fs.SkipDir // an unreadable folder is left out
		}
		if !e.IsDir() {
			return nil
		}
		if ctx.Err() != nil {
			return ctx.Err()
		}
		rel, _ := filepath.Rel(root, p)
		if rel != "." && (strings.HasPrefix(e.Name(), ".") || strings.Count(rel, string(filepath.Separator)) >= folderDepth) {
			return fs.SkipDir
		}
		f, ok := resultFolder(p)
		if !ok {
			if fi, err := os.Lstat(filepath.Join(p, measuresFile)); err == nil && fi.Mode().IsRegular() {
				// A cohort's folder: listed, and its bundles and comparisons below it too.
				name := filepath.ToSlash(rel)
				f := ipc.ResultFolder{ID: ipc.FolderRootOpen + "/" + name, Root: ipc.FolderRootOpen, Name: name,
					Kind: ipc.FolderCohort, Modified: fi.ModTime().UTC()}
				for _, t := range ipc.FolderTables {
					if tablePath(p, t) != "" {
						f.Tables = append(f.Tables, t)
					}
				}
				out = append(out, f)
			}
			return nil
		}
		if f.Kind == ipc.FolderComparison && !comparisonWithin(root, p) {
			return fs.SkipDir
		}
		name := filepath.ToSlash(rel)
		f.ID, f.Root, f.Name = ipc.FolderRootOpen+"/"+name, ipc.FolderRootOpen, name
		out = append(out, f)
		if len(out) >= folderLimit {
			return fs.SkipAll
		}
		return fs.SkipDir
	})
	if err != nil {
		return nil, fmt.Errorf("results folder %s: %w", root, unwrapPath(err))
	}
	return out, nil
}

// measuresFile is the file that makes a folder a cohort's (its subjects × measures table).
const measuresFile = "measures.tsv"

// FolderTable reads one of a listed cohort folder's tables (ipc.FolderTables), from the folder
// or its compare/ (compare's default output), as the desktop app's cohort view reads them.
func (d *Daemon) FolderTable(ctx context.Context, id, name string) ([]byte, error) {
	if !slices.Contains(ipc.FolderTables, name) {
		return nil, ipc.Errorf(ipc.CodeBadRequest, "folder table %q: want one of %s", name, strings.Join(ipc.FolderTables, ", "))
	}
	list, err := d.Folders(ctx)
	if err != nil {
		return nil, err
	}
	for _, f := range list {
		if f.ID != id || f.Kind != ipc.FolderCohort {
			continue
		}
		dir := filepath.Join(d.opt.OpenRoot, filepath.FromSlash(strings.TrimPrefix(f.ID, ipc.FolderRootOpen+"/")))
		p := tablePath(dir, name)
		if p == "" {
			return nil, ipc.Errorf(ipc.CodeNotFound, "%s has no %s", id, name)
		}
		if fi, err := os.Lstat(p); err == nil && fi.Size() > ipc.MaxFolderTableBytes {
			return nil, ipc.Errorf(ipc.CodeTooLarge, "%s of %s: %d bytes, more than %d", name, id, fi.Size(), ipc.MaxFolderTableBytes)
		}
		return os.ReadFile(p)
	}
	return nil, ipc.Errorf(ipc.CodeNotFound, "folder %q: no such cohort folder (GET %s/folders lists them)", id, ipc.Prefix)
}

// tablePath is the cohort folder dir's table name, in the folder or in its compare/ (compare's
// default output), as a regular file (no symbolic link); "" when neither holds it.
func tablePath(dir, name string) string {
	for _, p := range []string{filepath.Join(dir, name), filepath.Join(dir, "compare", name)} {
		if fi, err := os.Lstat(p); err == nil && fi.Mode().IsRegular() {
			return p
		}
	}
	return ""
}

// comparisonWithin says whether the comparison in dir names a reference bundle under root
// (opening it opens that bundle, which must be as reachable as the comparison).
func comparisonWithin(root, dir string) bool {
	b, err := os.ReadFile(filepath.Join(dir, schema.ComparisonFile))
	if err != nil {
		return false
	}
	var c schema.Comparison
	if json.Unmarshal(b, &c) != nil || c.ReferenceBundle == "" {
		return false
	}
	return within(root, c.ReferenceBundle)
}

// within says whether p, with its symbolic links resolved, lies under root's resolved path.
func within(root, p string) bool {
	r, err := filepath.EvalSymlinks(root)
	if err != nil {
		return false
	}
	q, err := filepath.EvalSymlinks(p)
	if err != nil {
		return false
	}
	rel, err := filepath.Rel(r, q)
	return err == nil && filepath.IsLocal(rel)
}

// openFolder opens the result folder whose ID GET /folders lists: a job's own bundle is that
// job; a folder under the open root becomes a done job as OpenBundle makes it. An ID the
// listing does not hold is not found.
func (d *Daemon) openFolder(ctx context.Context, req ipc.JobRequest) (ipc.Job, error) {
	if req.Open != "" || req.Scan != "" || req.ScanUpload != "" || req.Mask != "" || req.MaskUpload != "" || req.ConfoundsUpload != "" || req.Norm != "" || req.Settings != nil {
		return ipc.Job{}, ipc.Errorf(ipc.CodeBadRequest, "open_folder names a listed results folder: give it alone (no open, scan, mask, confounds, norm or settings)")
	}
	list, err := d.Folders(ctx)
	if err != nil {
		return ipc.Job{}, err
	}
	for _, f := range list {
		if f.ID != req.OpenFolder {
			continue
		}
		if f.Kind == ipc.FolderCohort {
			return ipc.Job{}, ipc.Errorf(ipc.CodeBadRequest, "open_folder %q is a cohort's folder: read its tables (GET %s/folders/table), and open its bundles by their own IDs", req.OpenFolder, ipc.Prefix)
		}
		if id, ok := strings.CutPrefix(f.ID, ipc.FolderRootJobs+"/"); ok {
			return d.Job(ctx, id)
		}
		dir := filepath.Join(d.opt.OpenRoot, filepath.FromSlash(strings.TrimPrefix(f.ID, ipc.FolderRootOpen+"/")))
		if !within(d.opt.OpenRoot, dir) {
			return ipc.Job{}, ipc.Errorf(ipc.CodeForbidden, "open_folder %q lies outside the helper's results folder", req.OpenFolder)
		}
		j, err := d.OpenBundle(ctx, dir)
		if err != nil {
			return ipc.Job{}, ipc.Errorf(ipc.CodeBadRequest, "open_folder: %v", err)
		}
		return j, nil
	}
	return ipc.Job{}, ipc.Errorf(ipc.CodeNotFound, "open_folder %q: no such results folder (GET %s/folders lists them)", req.OpenFolder, ipc.Prefix)
}
