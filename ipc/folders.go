package ipc

import (
	"context"
	"net/http"
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
)

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
	Kind     string    `json:"kind"` // FolderBundle, FolderGroup or FolderComparison
	Modified time.Time `json:"modified"`
}

// FolderLister is a Service that lists the result folders a client may open. The daemon is
// one; a Service that is not answers GET /folders with 404.
type FolderLister interface {
	Folders(ctx context.Context) ([]ResultFolder, error)
}

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
