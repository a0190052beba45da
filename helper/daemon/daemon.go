// Package daemon is the helper's side of HubScope's local IPC: it implements ipc.Service on a
// results directory — a job queue that runs pipeline.Run, progress event streams, results
// summaries, display volumes, seed-based connectivity maps and bundle downloads — and leaves
// sockets, authentication and HTTP to ipc's server wiring.
//
// # The results directory
//
// One directory per job, named by its ID (UTC submission time to the microsecond, then 64
// random bits: IDs sort by time and cannot be guessed from one another):
//
//	RESULTS/                       0700
//	  20250101T120000000000-3f9c…/ one job
//	    job.json                   ipc.Job plus the inputs, rewritten atomically (temp + rename)
//	    input/                     uploaded scan and mask (web transport)
//	    bundle/                    the results bundle (pipeline writes .bundle.partial-* first)
//	  uploads/                     uploads not yet submitted: ID.nii[.gz] and ID.json
//
// A restarted daemon reads every job.json: jobs it finds queued or running were cut off by a
// crash, kill -9 or power loss, so it marks them interrupted and removes their partial bundles.
package daemon

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"log"
	"os"
	"path/filepath"
	"regexp"
	"runtime"
	"sort"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/hubscope/hubscope/helper/bundle"
	"github.com/hubscope/hubscope/helper/scratch"
	"github.com/hubscope/hubscope/ipc"
)

// Options configure a Daemon. The zero value is usable: default results directory, 4 GiB
// uploads, backend auto.
type Options struct {
	// ResultsDir holds one directory per job ("" = DefaultResultsDir()).
	ResultsDir string
	// MaxUpload bounds one uploaded file in bytes (0 = DefaultMaxUpload).
	MaxUpload int64
	// Backend is what jobs get when their settings say auto: auto, cpu or cuda.
	Backend string
	// CPUJobs bounds the CPU jobs that run at once (0 = DefaultCPUJobs()).
	CPUJobs int
	// Verbose lets logs name scans (file names) and quote engine notes.
	Verbose bool
	// Log receives one line per job event worth keeping (nil = no log).
	Log *log.Logger
	// NoSeedPrefetch keeps a job's summary from reading its series for seed maps ahead (a
	// daemon that serves one report, not an app whose user will click).
	NoSeedPrefetch bool
	// OpenRoot is a folder whose finished results folders (bundles, group bundles, a
	// cohort's derivatives, comparisons) clients may list and open by ID (Folders), besides
	// the jobs' own bundles: the browser app's way to open results on this machine ("" =
	// none; serve --open-root).
	OpenRoot string
	// EventInterval is the progress event period while a job runs (0 = 200 ms, inside the
	// protocol's 250 ms promise with room for scheduling delays).
	EventInterval time.Duration
}

// DefaultMaxUpload is the upload limit unless told otherwise: a 1 mm whole-brain scan of 1,200
// float32 volumes is ~33 GB, but clinical resting-state scans are 50–500 MB compressed.
const DefaultMaxUpload = 4 << 30

// DefaultCPUJobs is how many CPU jobs run at once: one per 8 cores, at least one. The CPU
// engine already spreads one job over every core (block products, assembly, metrics and
// random networks), so a second concurrent job mostly halves each job's share of the cores
// while doubling memory (N·L + E per job); running them one after the other finishes the
// first sooner at the same total time. On large machines a few jobs at once fill the cores
// that the single-threaded stages (gzip decoding, Leiden) leave idle.
func DefaultCPUJobs() int { return max(1, runtime.NumCPU()/8) }

// DefaultResultsDir is $XDG_DATA_HOME/hubscope/results, else ~/.local/share/hubscope/results.
func DefaultResultsDir() (string, error) {
	if d := os.Getenv("XDG_DATA_HOME"); d != "" && filepath.IsAbs(d) {
		return filepath.Join(d, "hubscope", "results"), nil
	}
	home, err := os.UserHomeDir()
	if err != nil {
		return "", fmt.Errorf("results directory: %w (set XDG_DATA_HOME or give one)", err)
	}
	return filepath.Join(home, ".local", "share", "hubscope", "results"), nil
}

// Messages of jobs that never finished.
const (
	interruptedMessage = "the helper stopped while this job was running"
	shutdownMessage    = "the helper was shut down before this job finished"
)

// Daemon implements ipc.Service. Create it with New and stop it with Close.
type Daemon struct {
	opt     Options
	dir     string
	uploads string
	log     *log.Logger

	backend string   // what "auto" resolves to: cuda or cpu
	gpu     *ipc.GPU // nil without a working GPU

	base context.Context // parent of every job's context: requests never stop jobs
	stop context.CancelFunc
	wg   sync.WaitGroup

	mu      sync.Mutex
	jobs    map[string]*job
	queue   []*job // queued jobs in submission order
	running map[string]int
	closed  bool
	idle    time.Time // when the last job ended (or the daemon started)

	// active is len(queue) plus the running jobs, refreshed under mu whenever either changes,
	// so that Info reads it without mu: mu is held while job.json is written and fsynced
	// (tens of milliseconds on a busy disk), and info must answer within 100 ms whatever the
	// queue is doing.
	active atomic.Int64

	views  *lru[*bundleView]
	series *lru[*seedEntry]

	atlasOnce sync.Once
	atlas     *atlasData
	atlasErr  error

	templateOnce sync.Once
	template     *templateImage
	templateErr  error
}

// New opens (creating it 0700 if needed) the results directory, recovers the jobs of earlier
// runs and resolves the backend. Backend "cuda" without a working GPU is an error.
func New(opt Options) (*Daemon, error) {
	if opt.ResultsDir == "" {
		dir, err := DefaultResultsDir()
		if err != nil {
			return nil, err
		}
		opt.ResultsDir = dir
	}
	if opt.MaxUpload <= 0 {
		opt.MaxUpload = DefaultMaxUpload
	}
	if opt.Backend == "" {
		opt.Backend = "auto"
	}
	if opt.CPUJobs <= 0 {
		opt.CPUJobs = DefaultCPUJobs()
	}
	if opt.EventInterval <= 0 {
		opt.EventInterval = 200 * time.Millisecond
	}
	lg := opt.Log
	if lg == nil {
		lg = log.New(io.Discard, "", 0)
	}
	dir, err := filepath.Abs(opt.ResultsDir)
	if err != nil {
		return nil, fmt.Errorf("results directory %s: %w", opt.ResultsDir, err)
	}
	if opt.OpenRoot != "" {
		root, err := filepath.Abs(opt.OpenRoot)
		if err == nil {
			root, err = filepath.EvalSymlinks(root) // listed paths are under the folder itself
		}
		if err == nil {
			var fi os.FileInfo
			if fi, err = os.Stat(root); err == nil && !fi.IsDir() {
				err = errors.New("not a folder")
			}
		}
		if err != nil {
			return nil, fmt.Errorf("results folder to open from %s: %w", opt.OpenRoot, unwrapPath(err))
		}
		opt.OpenRoot = root
	}
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return nil, fmt.Errorf("results directory %s: %w", dir, err)
	}
	// MkdirAll leaves an existing directory's mode alone; results are private.
	if err := os.Chmod(dir, 0o700); err != nil {
		return nil, fmt.Errorf("results directory %s: %w", dir, err)
	}
	d := &Daemon{opt: opt, dir: dir, uploads: filepath.Join(dir, "uploads"), log: lg,
		jobs: map[string]*job{}, running: map[string]int{}, idle: time.Now(),
		views: newLRU[*bundleView](8), series: newLRU[*seedEntry](3)}
	if err := os.MkdirAll(d.uploads, 0o700); err != nil {
		return nil, fmt.Errorf("results directory %s: %w", dir, err)
	}
	if d.backend, d.gpu, err = resolveBackend(opt.Backend); err != nil {
		return nil, err
	}
	d.base, d.stop = context.WithCancel(context.Background())
	if err := d.recover(); err != nil {
		return nil, err
	}
	d.cleanUploads()
	return d, nil
}

// Dir is the results directory.
func (d *Daemon) Dir() string { return d.dir }

// Backend is what "auto" resolved to: cuda or cpu.
func (d *Daemon) Backend() string { return d.backend }

// Close stops the daemon: queued jobs and running ones (cancelled; the pipeline stops within a
// second) are marked interrupted — the user did not cancel them, the helper stopped — and
// Close returns when every job has ended, or ctx ends first.
func (d *Daemon) Close(ctx context.Context) error {
	d.mu.Lock()
	if d.closed {
		d.mu.Unlock()
		return nil
	}
	d.closed = true
	for _, j := range d.queue {
		d.finishLocked(j, ipc.JobInterrupted, shutdownMessage)
	}
	d.queue = nil
	d.recountLocked()
	d.mu.Unlock()
	d.stop()
	done := make(chan struct{})
	go func() { d.wg.Wait(); close(done) }()
	select {
	case <-done:
		return nil
	case <-ctx.Done():
		return fmt.Errorf("helper shutdown: jobs still stopping: %w", ctx.Err())
	}
}

// Idle reports whether no job is queued or running, and since when.
func (d *Daemon) Idle() (bool, time.Time) {
	d.mu.Lock()
	defer d.mu.Unlock()
	return len(d.queue) == 0 && d.activeRunning() == 0, d.idle
}

// recountLocked refreshes active after the queue or the running jobs changed.
func (d *Daemon) recountLocked() { d.active.Store(int64(len(d.queue) + d.activeRunning())) }

func (d *Daemon) activeRunning() int {
	n := 0
	for _, c := range d.running {
		n += c
	}
	return n
}

// idPattern is the form of job IDs; anything else in a request is refused before it reaches
// the file system.
var idPattern = regexp.MustCompile(`^[0-9]{8}T[0-9]{12}-[0-9a-f]{16}$`)

// newID returns a job ID: UTC time to the microsecond (sortable), then 64 random bits.
func newID(t time.Time) string {
	var b [8]byte
	rand.Read(b[:])
	t = t.UTC()
	return t.Format("20060102T150405") + fmt.Sprintf("%06d", t.Nanosecond()/1000) + "-" + hex.EncodeToString(b[:])
}

// record is job.json: the job as clients see it plus what the daemon needs to run and show it.
type record struct {
	ipc.Job
	Scan string `json:"scan_path"`
	Mask string `json:"mask_path,omitempty"`
	Norm string `json:"norm_path,omitempty"` // normative folder the job is compared with
	// Space codes of the scan's header (NIfTI sform_code and qform_code), kept for the
	// template-space decision (see isMNI) after the scan itself may be gone.
	SformCode int32 `json:"sform_code"`
	QformCode int32 `json:"qform_code"`
	// Class is the queue the job waits in: cuda or cpu.
	Class string `json:"class"`
	// BundleDir is the results bundle of a job opened from an existing folder (OpenBundle);
	// "" for a job the daemon ran (its bundle is the job directory's bundle/).
	BundleDir string `json:"bundle_dir,omitempty"`
	// OverlayDir is a two-group comparison's folder opened with BundleDir as its reference
	// bundle: its maps (t_<map> …) are served beside the bundle's volumes.
	OverlayDir string `json:"overlay_dir,omitempty"`
}

func (d *Daemon) jobDir(id string) string { return filepath.Join(d.dir, id) }

// save writes job.json atomically: a reader (or a restart after a crash) sees the old record
// or the new one, never a mix.
func (d *Daemon) save(r *record) error {
	b, err := json.MarshalIndent(r, "", "  ")
	if err != nil {
		return err
	}
	dir := d.jobDir(r.ID)
	// Named after this process, so the next save of this job removes a killed daemon's leftover.
	f, err := scratch.CreateBeside(filepath.Join(dir, "job.json"))
	if err != nil {
		return fmt.Errorf("job %s: %w", r.ID, err)
	}
	_, err = f.Write(append(b, '\n'))
	if err == nil {
		err = f.Sync()
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Rename(f.Name(), filepath.Join(dir, "job.json"))
	}
	if err != nil {
		os.Remove(f.Name())
		return fmt.Errorf("job %s: write job.json: %w", r.ID, err)
	}
	return nil
}

// recover loads the jobs of earlier runs. Jobs found queued or running were cut off: they
// become interrupted, their partial bundles are removed, and so is any bundle they hold (a
// crash between the bundle's commit and job.json's update would leave a complete-looking
// bundle for a job that never reported success; it cannot be trusted more than the state).
func (d *Daemon) recover() error {
	entries, err := os.ReadDir(d.dir)
	if err != nil {
		return fmt.Errorf("results directory %s: %w", d.dir, err)
	}
	now := time.Now().UTC()
	for _, e := range entries {
		if !e.IsDir() || !idPattern.MatchString(e.Name()) {
			continue
		}
		dir := d.jobDir(e.Name())
		b, err := os.ReadFile(filepath.Join(dir, "job.json"))
		if err != nil {
			d.log.Printf("results: skipping %s: %v", e.Name(), err)
			continue
		}
		var r record
		if err := json.Unmarshal(b, &r); err != nil || r.ID != e.Name() {
			d.log.Printf("results: skipping %s: job.json unreadable", e.Name())
			continue
		}
		removeLeftovers(dir)
		if !r.State.Terminal() {
			os.RemoveAll(filepath.Join(dir, "bundle"))
			r.State, r.Error, r.Finished = ipc.JobInterrupted, interruptedMessage, &now
			r.Stage, r.Fraction, r.ETASeconds = "", 0, 0
			if err := d.save(&r); err != nil {
				return err
			}
			d.log.Printf("job %s: marked interrupted (the helper stopped while it ran)", r.ID)
		}
		j := newJob(r, dir)
		j.ended()
		d.jobs[r.ID] = j
	}
	return nil
}

// removeLeftovers deletes temporary files a crash left in a job directory: partial bundles
// (bundle's .bundle.partial-*) and half-written job.json temps.
func removeLeftovers(dir string) {
	entries, _ := os.ReadDir(dir)
	for _, e := range entries {
		if strings.HasPrefix(e.Name(), ".bundle.partial-") || strings.HasPrefix(e.Name(), ".job.json.tmp-") {
			os.RemoveAll(filepath.Join(dir, e.Name()))
		}
	}
}

// uploadTTL is how long an upload waits for the job that uses it.
const uploadTTL = 24 * time.Hour

// cleanUploads removes partial uploads of a crashed daemon and uploads never submitted.
func (d *Daemon) cleanUploads() {
	entries, _ := os.ReadDir(d.uploads)
	for _, e := range entries {
		info, err := e.Info()
		if err != nil {
			continue
		}
		if strings.Contains(e.Name(), ".partial") || strings.HasPrefix(e.Name(), ".") || time.Since(info.ModTime()) > uploadTTL {
			os.RemoveAll(filepath.Join(d.uploads, e.Name()))
		}
	}
}

// Jobs lists every job, newest first.
func (d *Daemon) Jobs(ctx context.Context) ([]ipc.Job, error) {
	d.mu.Lock()
	out := make([]ipc.Job, 0, len(d.jobs))
	for _, j := range d.jobs {
		out = append(out, j.rec.Job)
	}
	d.mu.Unlock()
	sort.Slice(out, func(a, b int) bool {
		if !out[a].Submitted.Equal(out[b].Submitted) {
			return out[a].Submitted.After(out[b].Submitted)
		}
		return out[a].ID > out[b].ID
	})
	return out, nil
}

// Job returns one job.
func (d *Daemon) Job(ctx context.Context, id string) (ipc.Job, error) {
	j, err := d.lookup(id)
	if err != nil {
		return ipc.Job{}, err
	}
	d.mu.Lock()
	defer d.mu.Unlock()
	return j.rec.Job, nil
}

func (d *Daemon) lookup(id string) (*job, error) {
	if !idPattern.MatchString(id) {
		return nil, ipc.Errorf(ipc.CodeNotFound, "no job %q", id)
	}
	d.mu.Lock()
	j, ok := d.jobs[id]
	d.mu.Unlock()
	if !ok {
		return nil, ipc.Errorf(ipc.CodeNotFound, "no job %q", id)
	}
	return j, nil
}

// finished returns the job's record and bundle directory, or a conflict for jobs that have
// no results (yet, or ever).
func (d *Daemon) finished(id string) (record, string, error) {
	j, err := d.lookup(id)
	if err != nil {
		return record{}, "", err
	}
	d.mu.Lock()
	r := j.rec
	d.mu.Unlock()
	if r.State != ipc.JobDone {
		return r, "", ipc.Errorf(ipc.CodeConflict, "job %s is %s: it has no results", id, r.State)
	}
	dir := filepath.Join(j.dir, "bundle")
	if r.BundleDir != "" {
		dir = r.BundleDir
	}
	if _, err := os.Stat(filepath.Join(dir, bundle.Marker)); err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			return r, "", ipc.Errorf(ipc.CodeNotFound, "job %s: its results bundle is gone", id)
		}
		return r, "", err
	}
	return r, dir, nil
}

var _ ipc.Service = (*Daemon)(nil)
