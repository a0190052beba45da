package ipc

import (
	"context"
	"io"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"time"
)

// Result folders the browser app may open (GET /folders): a web page sees no paths on the
// helper's machine, so the helper lists the finished results folders under the roots it was
// configured with — its own jobs' bundles and the folder given at its start (serve
// --open-root) — and a client opens one by its ID (JobRequest.OpenFolder), never by a path.

// Folder kinds.
const (
	FolderBundle     = "bundle"     // one scan's results bundle
	FolderGroup      = "group"      // a group-mean network's bundle (group, cohort's group/)
	FolderComparison = "comparison" // a two-group comparison's folder (compare.json)
	FolderCohort     = "cohort"     // a cohort's derivatives folder (measures.tsv), its bundles listed apart
)

// FolderTables are the tables of a cohort's folder a client may read by the folder's ID
// (GET /folders/table?id=ID&name=NAME): the subjects × measures table and a comparison's
// tables, looked for in the folder and in its compare/ (compare's default output).
var FolderTables = []string{"measures.tsv", "compare_global.tsv", "compare_nodes.tsv"}

// Folder roots.
const (
	FolderRootJobs = "jobs"   // the bundles of this helper's own jobs
	FolderRootOpen = "folder" // the folder given at the helper's start (serve --open-root)
)

// ResultFolder is one finished results folder under the helper's roots.
type ResultFolder struct {
	// ID is what JobRequest.OpenFolder takes: the root and the folder's path inside it
	// ("folder/deriv/group/task-rest_desc-groupmean_hubscope", "jobs/<job ID>").
	ID   string `json:"id"`
	Root string `json:"root"` // FolderRootJobs or FolderRootOpen
	// Name is what to show: the folder's path inside its root (slash-separated), or for a
	// job's bundle the job's name.
	Name     string    `json:"name"`
	Kind     string    `json:"kind"` // FolderBundle, FolderGroup, FolderComparison or FolderCohort
	Modified time.Time `json:"modified"`
	// Tables are the FolderTables a cohort folder holds (GET /folders/table serves them).
	Tables []string `json:"tables,omitempty"`
}

// FolderLister is a Service that lists the result folders a client may open. The daemon is
// one; a Service that is not answers GET /folders with 404.
type FolderLister interface {
	Folders(ctx context.Context) ([]ResultFolder, error)
}

// FolderTabler is a FolderLister that serves the tables of its cohort folders.
type FolderTabler interface {
	FolderTable(ctx context.Context, id, name string) ([]byte, error)
}

// FolderTable reads one of a cohort folder's tables (FolderTables) by the folder's ID.
func (c *Client) FolderTable(ctx context.Context, id, name string) ([]byte, error) {
	resp, err := c.do(ctx, http.MethodGet, c.endpoint(url.Values{"id": {id}, "name": {name}}, "folders", "table"), nil, "")
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(io.LimitReader(resp.Body, MaxFolderTableBytes+1))
	if err == nil && len(b) > MaxFolderTableBytes {
		err = Errorf(CodeTooLarge, "folder table %s of %s: more than %d bytes", name, id, MaxFolderTableBytes)
	}
	return b, err
}

// MaxFolderTableBytes bounds a table served by GET /folders/table (a measures table of
// thousands of runs and hundreds of columns is a few MB).
const MaxFolderTableBytes = 64 << 20

var _ FolderTabler = (*Client)(nil)

// Folders lists the helper's result folders (GET /folders).
func (c *Client) Folders(ctx context.Context) ([]ResultFolder, error) {
	var v []ResultFolder
	return v, c.getJSON(ctx, c.endpoint(nil, "folders"), &v)
}

var _ FolderLister = (*Client)(nil)

func (h *handler) folders(w http.ResponseWriter, r *http.Request, _ input) (any, error) {
	fl, ok := h.svc.(FolderLister)
	if !ok {
		return nil, Errorf(CodeNotFound, "this helper lists no result folders")
	}
	fs, err := fl.Folders(r.Context())
	if fs == nil {
		fs = []ResultFolder{}
	}
	return fs, err
}

func (h *handler) folderTable(w http.ResponseWriter, r *http.Request, _ input) (any, error) {
	ft, ok := h.svc.(FolderTabler)
	if !ok {
		return nil, Errorf(CodeNotFound, "this helper serves no folder tables")
	}
	q := r.URL.Query()
	id, name := q.Get("id"), q.Get("name")
	if id == "" || !slices.Contains(FolderTables, name) {
		return nil, Errorf(CodeBadRequest, "folder table: give id (GET %s/folders) and name, one of %s", Prefix, strings.Join(FolderTables, ", "))
	}
	b, err := ft.FolderTable(r.Context(), id, name)
	if err != nil {
		return nil, err
	}
	w.Header().Set("Content-Type", "text/tab-separated-values; charset=utf-8")
	w.Header().Set("Content-Length", strconv.Itoa(len(b)))
	w.WriteHeader(http.StatusOK)
	w.Write(b)
	return nil, nil
}
