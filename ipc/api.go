// Package ipc is the protocol between HubScope's desktop app (or its browser build) and the
// helper daemon (`hubscope-helper serve`): request and response types, the client, and the
// server wiring with its authentication and limits.
//
// The protocol is HTTP/1.1 with JSON bodies and NDJSON event streams, versioned under /v1,
// over a Unix domain socket (mode 0600) for the desktop app, or on 127.0.0.1 with a bearer
// token for the browser build. Large volumes travel as little-endian binary bodies with a JSON
// header (see WriteVolume).
//
// Endpoints (all under Prefix; {id} is a job ID, voxel = "i,j,k" grid indices):
//
//	GET  /info                          Info
//	POST /uploads?name=F                raw scan bytes (web transport) → Upload
//	POST /uploads/parts?name=F&size=N   an upload sent in parts → UploadParts (parts.go)
//	POST /uploads/parts/{id}?offset=O   one part → UploadProgress, the last → Upload
//	POST /jobs                          JobRequest → Job (202)
//	GET  /jobs                          []Job, newest first
//	GET  /folders                       []ResultFolder: result folders a client may open (folders.go)
//	GET  /folders/table?id=ID&name=N    one table of a cohort folder (FolderTables), TSV
//	GET  /jobs/{id}                     Job
//	GET  /jobs/{id}/events              NDJSON stream of Event until the job ends
//	POST /jobs/{id}/cancel              Job
//	GET  /jobs/{id}/summary             Summary (finished jobs)
//	GET  /jobs/{id}/volumes/{name}      volume (binary, see WriteVolume)
//	GET  /jobs/{id}/seed?voxel=i,j,k    seed-based connectivity map (binary volume)
//	GET  /jobs/{id}/series?voxel=i,j,k  Series
//	GET  /jobs/{id}/files               []FileInfo of the results bundle
//	GET  /jobs/{id}/files/{name}        one bundle file's bytes (an attachment)
//	GET  /jobs/{id}/bundle.zip          a finished job's whole bundle as one .zip (download.go)
//	GET  /jobs/{id}/report.pdf          a finished job's PDF report (HandlerOptions.Report)
//	POST /dicom/series                  SeriesRequest → DICOMListing (Unix socket only)
//
// Errors come back with an HTTP status and an ErrorBody.
//
// The same Service interface is implemented by the daemon (helper side) and by *Client (app
// side), so the server wiring can be tested against a scripted service and the app against a
// scripted daemon, both over real sockets.
package ipc

import (
	"context"
	"errors"
	"fmt"
	"github.com/hubscope/hubscope/ipc/schema"
	"github.com/hubscope/hubscope/ipc/settings"
	"io"
	"net/http"
	"time"
)

// Prefix is the versioned root of every endpoint.
const Prefix = "/v1"

// JobState is where a job is in its life.
type JobState string

const (
	JobQueued    JobState = "queued"
	JobRunning   JobState = "running"
	JobDone      JobState = "done"
	JobFailed    JobState = "failed"
	JobCancelled JobState = "cancelled"
	// JobInterrupted marks a job that was running (or queued) when its helper stopped without
	// finishing it — a crash, kill -9 or power loss. Its bundle never looks complete.
	JobInterrupted JobState = "interrupted"
)

// Terminal reports whether the state is final.
func (s JobState) Terminal() bool {
	switch s {
	case JobDone, JobFailed, JobCancelled, JobInterrupted:
		return true
	}
	return false
}

// JobRequest submits one analysis. Exactly one of Scan (a path on the helper's machine; only
// over the Unix socket) and ScanUpload (an Upload ID; any transport) is set; the mask likewise
// (or neither, for the automatic EPI mask).
type JobRequest struct {
	Scan       string `json:"scan,omitempty"`
	Mask       string `json:"mask,omitempty"`
	ScanUpload string `json:"scan_upload,omitempty"`
	MaskUpload string `json:"mask_upload,omitempty"`
	// ConfoundsUpload is an uploaded confounds table (.tsv, fMRIPrep's) for the cleaning: the
	// web transport's way to give what settings' confounds names on the helper's disk.
	ConfoundsUpload string `json:"confounds_upload,omitempty"`
	Name            string `json:"name,omitempty"` // display name; default: the scan's base name
	// Norm is a normative folder (built by "norm build") on the helper's disk, only over the
	// Unix socket: the job is compared with it (z-maps, hubs lost and gained, clusters).
	Norm string `json:"norm,omitempty"`
	// Open is a finished results folder on the helper's disk, only over the Unix socket: a
	// results bundle (run, group) or a two-group comparison's folder (compare). It is opened,
	// not run: the job is done at once and serves the folder's volumes and files. Give it
	// alone (no scan, mask, norm or settings).
	Open string `json:"open,omitempty"`
	// OpenFolder opens a finished results folder by its ID in GET /folders (ResultFolder.ID),
	// on any transport: the folders under the helper's own roots, never a path the client
	// names. Give it alone, as Open.
	OpenFolder string `json:"open_folder,omitempty"`
	// Settings are the analysis's choices; nil = the defaults (settings.Defaults), and a JSON
	// object's missing keys take the defaults (settings.Settings.UnmarshalJSON).
	Settings *settings.Settings `json:"settings,omitempty"`
}

// Upload is a file received by the helper for a later JobRequest.
type Upload struct {
	ID   string `json:"id"`
	Name string `json:"name"`
	Size int64  `json:"size"`
}

// Job is one analysis as the helper tracks it.
type Job struct {
	ID        string            `json:"id"`
	Name      string            `json:"name"`
	State     JobState          `json:"state"`
	Settings  settings.Settings `json:"settings"` // as the job runs them, defaults filled in
	Submitted time.Time         `json:"submitted"`
	Started   *time.Time        `json:"started,omitempty"`
	Finished  *time.Time        `json:"finished,omitempty"`
	// Progress of the current stage while running.
	Stage      string  `json:"stage,omitempty"`
	Fraction   float64 `json:"fraction"`              // of the current stage, 0…1 (0 when unknown)
	ETASeconds float64 `json:"eta_seconds,omitempty"` // of the current stage; 0 = unknown
	Backend    string  `json:"backend,omitempty"`     // cpu | cuda, once chosen
	Error      string  `json:"error,omitempty"`       // failed or interrupted: what happened, in words
	// Beside are the stages running beside the current one while the job runs (random
	// networks and global measures, leading-eigenvector modules: progress.Lane), in the order
	// they started; absent otherwise, and to clients that predate it (they read Stage alone).
	Beside []StageProgress `json:"beside,omitempty"`
}

// StageProgress is one stage's progress: its name, the fraction done (0 when unknown), the
// units done of how many (Total 0 = unknown) and the time left (0 = unknown).
type StageProgress struct {
	Stage      string  `json:"stage"`
	Fraction   float64 `json:"fraction"`
	Done       int64   `json:"done,omitempty"`
	Total      int64   `json:"total,omitempty"`
	ETASeconds float64 `json:"eta_seconds,omitempty"`
}

// Event is one line of a job's event stream: the job's state at Time plus, optionally, a
// message (a note from the engine: dropped voxels, the chosen threshold, …). The stream's first
// event is the job's current state; while the job runs an event comes at least every 250 ms;
// the last event carries a terminal state, after which the stream ends.
type Event struct {
	Seq     int64     `json:"seq"`
	Time    time.Time `json:"time"`
	Job     Job       `json:"job"`
	Done    int64     `json:"done,omitempty"`  // units of the current stage finished
	Total   int64     `json:"total,omitempty"` // units of the current stage (0 = unknown)
	Message string    `json:"message,omitempty"`
}

// GPU describes the compute device the helper uses.
type GPU struct {
	Name              string `json:"name"`
	ComputeCapability string `json:"compute_capability"`
	MemoryBytes       uint64 `json:"memory_bytes"`
	Driver            string `json:"driver"`
}

// Info describes the helper and its machine.
type Info struct {
	App             string `json:"app"`
	Version         string `json:"version"`
	API             string `json:"api"`     // Prefix
	Backend         string `json:"backend"` // what "auto" resolves to: cuda | cpu
	GPU             *GPU   `json:"gpu,omitempty"`
	CPU             string `json:"cpu"`
	Cores           int    `json:"cores"`
	FreeMemoryBytes uint64 `json:"free_memory_bytes"`
	Transport       string `json:"transport"` // unix | web
	MaxUploadBytes  int64  `json:"max_upload_bytes"`
	// Jobs waiting or running now.
	ActiveJobs int `json:"active_jobs"`
}

// Hub is one row of the hub table.
type Hub struct {
	Node          int        `json:"node"`
	Voxel         [3]int     `json:"voxel"` // i, j, k on the scan's grid
	MNI           [3]float64 `json:"mm"`    // world position (scanner or MNI mm, per the affine)
	Degree        int        `json:"degree"`
	Strength      float64    `json:"strength"`
	HubZ          float64    `json:"hub_z"`
	Module        int        `json:"module,omitempty"`        // 1 = largest; 0 = not computed
	Participation *float64   `json:"participation,omitempty"` // when modules were computed
	Role          string     `json:"role,omitempty"`          // connector | provincial (Guimerà & Amaral)
	Region        string     `json:"region,omitempty"`        // atlas label, when known
}

// FileInfo names one file of a results bundle.
type FileInfo struct {
	Name string `json:"name"` // relative to the bundle, slash-separated
	Size int64  `json:"size"`
}

// Summary is what a finished job found.
type Summary struct {
	Job Job `json:"job"`
	// Bundle is the results directory on the helper's machine.
	Bundle string `json:"bundle"`
	// Metrics is metrics.json verbatim (scan, network, hubs rule, global measures, modules).
	Metrics []byte `json:"metrics"`
	Hubs    []Hub  `json:"hubs"` // strongest first
	// Volumes lists the names GET …/volumes/{name} serves for this job (degree, strength,
	// hubs, hub_z, modules, mean, mask, and atlas and template — the MNI152 T1 brain on the
	// scan's grid — when the scan is in MNI space or registered to it, …).
	Volumes []string   `json:"volumes"`
	Files   []FileInfo `json:"files"`
	// Atlas names the regions of the "atlas" volume (label → name), when the scan lies in a
	// space the helper's atlas covers.
	Atlas *AtlasInfo `json:"atlas,omitempty"`
	// DFC is the dynamic analysis, when windows were asked for; window w's degree map is the
	// volume "dfc_degree@w" (w from 0).
	DFC *schema.DFCSummary `json:"dfc,omitempty"`
	// ScanToMNI maps the scan's world coordinates (mm) to MNI coordinates when the scan was
	// registered to MNI space (qc/registration.json); nil for a scan in MNI space already
	// (its world coordinates are MNI) or one not registered.
	ScanToMNI *[4][4]float64 `json:"scan_to_mni,omitempty"`
	// InputChecks are provenance.json's input_checks: the TR used and where it came from,
	// and the scan header's oddities the reader worked around (nibabel's levels and fixes),
	// for the app to show beside the results; nil for a bundle without them.
	InputChecks *schema.InputChecks `json:"input_checks,omitempty"`
	// Group is group.json of a group-mean network's bundle (hubscope-helper group): its
	// subjects, the mean (of Fisher z or of r) and the mask rule; nil for one scan's bundle.
	Group *schema.Group `json:"group,omitempty"`
	// Comparison is compare.json of a two-group comparison opened as a job (JobRequest.Open):
	// its t-, p- and q-maps are volumes (t_<map>, p_<map>, q_<map>) served on the grid of
	// the reference bundle, one of the compared runs, whose anatomy, atlas and maps are the
	// job's others; nil for any other job.
	Comparison *schema.Comparison `json:"comparison,omitempty"`
}

// AtlasInfo describes the labelled atlas used to name regions.
type AtlasInfo struct {
	Name     string         `json:"name"`     // e.g. "AAL (Tzourio-Mazoyer et al. 2002)"
	Citation string         `json:"citation"` // what to cite, and its licence
	Labels   map[int]string `json:"labels"`   // value in the "atlas" volume → region name
}

// Series is one voxel's time series.
type Series struct {
	Voxel  [3]int    `json:"voxel"`
	Node   int       `json:"node"`
	TR     float64   `json:"tr_seconds"`
	Values []float32 `json:"values"`
}

// Service is the helper's API. The daemon implements it; so does *Client, over a socket.
// Implementations return *Error values for failures a client should see (not found, bad
// request, conflict, too large, forbidden); any other error is reported as internal.
type Service interface {
	Info(ctx context.Context) (Info, error)
	// Upload stores a scan or mask sent by the browser build. name is the file's base name
	// (for its extension and for display).
	Upload(ctx context.Context, name string, body io.Reader) (Upload, error)
	Submit(ctx context.Context, req JobRequest) (Job, error)
	Jobs(ctx context.Context) ([]Job, error)
	Job(ctx context.Context, id string) (Job, error)
	// Events streams the job's events; the channel closes after the terminal event or when
	// ctx ends. Slow readers miss intermediate progress events, never the terminal one.
	Events(ctx context.Context, id string) (<-chan Event, error)
	Cancel(ctx context.Context, id string) (Job, error)
	Summary(ctx context.Context, id string) (Summary, error)
	Volume(ctx context.Context, id, name string) (*Volume, error)
	SeedMap(ctx context.Context, id string, voxel [3]int) (*Volume, error)
	Series(ctx context.Context, id string, voxel [3]int) (Series, error)
	Files(ctx context.Context, id string) ([]FileInfo, error)
	// OpenFile opens one bundle file for download; the caller closes it.
	OpenFile(ctx context.Context, id, name string) (io.ReadCloser, FileInfo, error)
}

// Error is a failure with the HTTP status a client sees.
type Error struct {
	Status  int    `json:"-"`
	Code    string `json:"code"`
	Message string `json:"message"`
}

func (e *Error) Error() string { return e.Message }

// ErrorBody is the JSON body of every error response.
type ErrorBody struct {
	Error *Error `json:"error"`
}

// Error codes.
const (
	CodeBadRequest   = "bad_request"
	CodeUnauthorized = "unauthorized"
	CodeForbidden    = "forbidden"
	CodeNotFound     = "not_found"
	CodeConflict     = "conflict"
	CodeTooLarge     = "too_large"
	CodeUnavailable  = "unavailable"
	CodeInternal     = "internal"
)

var codeStatus = map[string]int{
	CodeBadRequest:   http.StatusBadRequest,
	CodeUnauthorized: http.StatusUnauthorized,
	CodeForbidden:    http.StatusForbidden,
	CodeNotFound:     http.StatusNotFound,
	CodeConflict:     http.StatusConflict,
	CodeTooLarge:     http.StatusRequestEntityTooLarge,
	CodeUnavailable:  http.StatusServiceUnavailable,
	CodeInternal:     http.StatusInternalServerError,
}

// Errorf returns an *Error with the code's HTTP status.
func Errorf(code, format string, args ...any) *Error {
	st, ok := codeStatus[code]
	if !ok {
		code, st = CodeInternal, http.StatusInternalServerError
	}
	return &Error{Status: st, Code: code, Message: fmt.Sprintf(format, args...)}
}

// BadSettings is a settings problem as a client sees it: a bad request naming the setting by
// its JSON key (a *settings.SettingError), or the error's words.
func BadSettings(err error) *Error {
	var se *settings.SettingError
	if errors.As(err, &se) {
		return Errorf(CodeBadRequest, "settings: %s: %s", se.Key, se.Problem)
	}
	return Errorf(CodeBadRequest, "settings: %v", err)
}

// IsCode reports whether err is (or wraps) an *Error with the given code.
func IsCode(err error, code string) bool {
	var e *Error
	return errors.As(err, &e) && e.Code == code
}
