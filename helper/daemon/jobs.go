package daemon

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/hubscope/hubscope/helper/dicom"
	"github.com/hubscope/hubscope/helper/nifti"
	"github.com/hubscope/hubscope/helper/pipeline"
	"github.com/hubscope/hubscope/helper/progress"
	"github.com/hubscope/hubscope/ipc"
	"github.com/hubscope/hubscope/ipc/settings"
)

// job is one analysis. rec and the flags are guarded by Daemon.mu.
type job struct {
	rec record
	dir string
	cfg pipeline.Config

	cancel    context.CancelFunc // set while running
	cancelled bool               // the user asked to cancel
	done      chan struct{}      // closed when the job reaches a terminal state
	events    *hub
	tracker   *progress.Tracker
}

func newJob(r record, dir string) *job {
	return &job{rec: r, dir: dir, done: make(chan struct{}), events: newHub()}
}

// ended closes done for a job loaded in a terminal state.
func (j *job) ended() {
	select {
	case <-j.done:
	default:
		close(j.done)
	}
}

// Submit validates a request, creates the job's directory and queues it.
func (d *Daemon) Submit(ctx context.Context, req ipc.JobRequest) (ipc.Job, error) {
	web := ipc.TransportFrom(ctx) == ipc.TransportWeb
	if req.OpenFolder != "" {
		return d.openFolder(ctx, req)
	}
	if req.Open != "" {
		return d.submitOpen(ctx, req, web)
	}
	switch {
	case (req.Scan == "") == (req.ScanUpload == ""):
		return ipc.Job{}, ipc.Errorf(ipc.CodeBadRequest, "give exactly one of scan (a path) and scan_upload (an upload ID)")
	case req.Mask != "" && req.MaskUpload != "":
		return ipc.Job{}, ipc.Errorf(ipc.CodeBadRequest, "give at most one of mask and mask_upload")
	case web && (req.Scan != "" || req.Mask != "" || req.Norm != ""):
		// The server wiring refuses these already; a Service reached another way must too.
		return ipc.Job{}, ipc.Errorf(ipc.CodeForbidden, "requests over the web transport cannot name files on the helper's disk; upload the scan instead")
	}
	set := settings.Defaults()
	if req.Settings != nil {
		set = *req.Settings
	}
	if web && set.Confounds != "" {
		return ipc.Job{}, ipc.Errorf(ipc.CodeForbidden, "requests over the web transport cannot name files on the helper's disk (settings' confounds); upload the confounds table and give its upload ID as confounds_upload")
	}
	if web {
		// An atlas (other than the embedded AAL) and its names are files on the helper's disk
		// too; the browser app offers the embedded AAL only.
		for _, key := range []string{"atlas", "atlas_names"} {
			if _, ok := set.DiskPaths()[key]; ok {
				return ipc.Job{}, ipc.Errorf(ipc.CodeForbidden, "requests over the web transport cannot name files on the helper's disk (settings' %s); use the embedded atlas, aal", key)
			}
		}
	}
	cfg, err := d.config(set)
	if err != nil {
		return ipc.Job{}, err
	}
	// An atlas file and its names are checked now, like the scan's path: absolute, readable.
	if set.Atlas != "" && !set.IsAAL() {
		if set.Atlas, err = checkPath("settings: atlas", set.Atlas); err != nil {
			return ipc.Job{}, err
		}
	}
	if set.AtlasNames != "" {
		if set.AtlasNames, err = checkPath("settings: atlas_names", set.AtlasNames); err != nil {
			return ipc.Job{}, err
		}
	}
	cfg.Atlas, cfg.AtlasNames = set.Atlas, set.AtlasNames

	now := time.Now().UTC()
	id := newID(now)
	dir := d.jobDir(id)
	r := record{Job: ipc.Job{ID: id, State: ipc.JobQueued, Settings: set, Submitted: now}}
	name := req.Name

	// Paths first (nothing to undo), then uploads, which move into the job's input/.
	if req.Scan != "" {
		if r.Scan, err = checkScanPath(req.Scan); err != nil {
			return ipc.Job{}, err
		}
		if name == "" {
			name = filepath.Base(r.Scan)
		}
	}
	if req.Mask != "" {
		if r.Mask, err = checkPath("mask", req.Mask); err != nil {
			return ipc.Job{}, err
		}
	}
	if req.Norm != "" {
		if r.Norm, err = checkNorm(req.Norm); err != nil {
			return ipc.Job{}, err
		}
	}
	if err := os.Mkdir(dir, 0o700); err != nil {
		return ipc.Job{}, fmt.Errorf("job %s: %w", id, err)
	}
	undo := func() { os.RemoveAll(dir) }
	if req.ScanUpload != "" {
		p, up, err := d.takeUpload(req.ScanUpload, dir, "scan")
		if err != nil {
			undo()
			return ipc.Job{}, err
		}
		r.Scan = p
		if name == "" {
			name = up.Name
		}
	}
	if req.MaskUpload != "" {
		p, _, err := d.takeUpload(req.MaskUpload, dir, "mask")
		if err != nil {
			undo()
			return ipc.Job{}, err
		}
		r.Mask = p
	}
	if req.ConfoundsUpload != "" {
		p, _, err := d.takeUpload(req.ConfoundsUpload, dir, "confounds")
		if err != nil {
			undo()
			return ipc.Job{}, err
		}
		// The uploaded table is the job's confounds table, as --confounds names one.
		set.Confounds, cfg.Confounds = p, p
		r.Job.Settings = set
	}
	// The header is read now, so that a file that is no 4D NIfTI fails at once, by name, and
	// its space codes are kept for the atlas decision.
	shownScan := ""
	if dicom.IsInput(r.Scan) {
		shownScan, err = checkDICOM(ctx, &r, cfg.DICOMSeries, &name)
	} else {
		err = checkScanHeader(&r, name)
	}
	if err != nil {
		undo()
		return ipc.Job{}, err
	}
	r.Name = displayName(name)
	r.Class = "cpu"
	if backend := cfg.Backend; backend == "cuda" || backend == "auto" && d.backend == "cuda" {
		r.Class = "cuda"
	}
	cfg.Scan, cfg.Mask, cfg.Norm, cfg.Out = r.Scan, r.Mask, r.Norm, filepath.Join(dir, "bundle")
	if shownScan != "" {
		r.Scan = shownScan // job.json keeps a DICOM path without the identity its files hold
	}
	if err := d.save(&r); err != nil {
		undo()
		return ipc.Job{}, err
	}
	j := newJob(r, dir)
	j.cfg = cfg

	d.mu.Lock()
	defer d.mu.Unlock()
	if d.closed {
		undo()
		return ipc.Job{}, ipc.Errorf(ipc.CodeUnavailable, "the helper is shutting down")
	}
	d.jobs[id] = j
	d.queue = append(d.queue, j)
	d.publishLocked(j, "")
	d.logf(j, "queued (%s)", r.Class)
	d.scheduleLocked()
	return j.rec.Job, nil
}

// config builds the pipeline configuration from the client's settings (complete: a JSON
// request's missing keys took the defaults when it was decoded) and names the setting at
// fault when it is not valid. Backend "auto" is the helper's own choice (serve --backend).
func (d *Daemon) config(s settings.Settings) (pipeline.Config, error) {
	cfg := pipeline.Config{Settings: s, Scan: "scan", Out: "out"} // named when the job is made
	cfg.KeepSeries = true                                         // seed maps, time series and the mean image need them
	if cfg.Backend == settings.BackendAuto {
		cfg.Backend = d.opt.Backend
	}
	if err := cfg.Validate(); err != nil {
		return cfg, ipc.BadSettings(err)
	}
	if cfg.Backend == settings.BackendCUDA && d.backend != "cuda" {
		return cfg, ipc.Errorf(ipc.CodeBadRequest, "settings: backend: cuda asked for, but this helper has no working GPU (%s)", d.backend)
	}
	return cfg, nil
}

// checkNorm accepts an absolute path to a normative folder (one holding norm.json, as "norm
// build" writes); the pipeline checks its settings against the job's before any long work.
func checkNorm(p string) (string, error) {
	if !filepath.IsAbs(p) {
		return "", ipc.Errorf(ipc.CodeBadRequest, "normative folder %q: give an absolute path", p)
	}
	p = filepath.Clean(p)
	fi, err := os.Stat(p)
	if err != nil {
		return "", ipc.Errorf(ipc.CodeBadRequest, "normative folder %s: %v", p, unwrapPath(err))
	}
	if !fi.IsDir() {
		return "", ipc.Errorf(ipc.CodeBadRequest, "normative folder %s: not a folder", p)
	}
	if fi, err := os.Stat(filepath.Join(p, "norm.json")); err != nil || !fi.Mode().IsRegular() {
		return "", ipc.Errorf(ipc.CodeBadRequest, "normative folder %s: no norm.json (build one with hubscope-helper norm build)", p)
	}
	return p, nil
}

// checkPath accepts an absolute path to a regular file (the helper's working directory means
// nothing to a client).
// submitOpen opens a finished results folder (a bundle, or a comparison's folder) as a done
// job (OpenBundle): nothing runs.
func (d *Daemon) submitOpen(ctx context.Context, req ipc.JobRequest, web bool) (ipc.Job, error) {
	switch {
	case web:
		return ipc.Job{}, ipc.Errorf(ipc.CodeForbidden, "requests over the web transport cannot name folders on the helper's disk")
	case req.Scan != "" || req.ScanUpload != "" || req.Mask != "" || req.MaskUpload != "" || req.ConfoundsUpload != "" || req.Norm != "" || req.Settings != nil:
		return ipc.Job{}, ipc.Errorf(ipc.CodeBadRequest, "open names a finished results folder: give it alone (no scan, mask, confounds, norm or settings)")
	case !filepath.IsAbs(req.Open):
		return ipc.Job{}, ipc.Errorf(ipc.CodeBadRequest, "open %q: give an absolute path", req.Open)
	}
	j, err := d.OpenBundle(ctx, filepath.Clean(req.Open))
	if err != nil {
		return ipc.Job{}, ipc.Errorf(ipc.CodeBadRequest, "open: %v", err)
	}
	return j, nil
}

func checkPath(what, p string) (string, error) {
	if !filepath.IsAbs(p) {
		return "", ipc.Errorf(ipc.CodeBadRequest, "%s %q: give an absolute path", what, p)
	}
	p = filepath.Clean(p)
	fi, err := os.Stat(p)
	if err != nil {
		return "", ipc.Errorf(ipc.CodeBadRequest, "%s %s: %v", what, p, unwrapPath(err))
	}
	if !fi.Mode().IsRegular() {
		return "", ipc.Errorf(ipc.CodeBadRequest, "%s %s: not a regular file", what, p)
	}
	return p, nil
}

// checkScanHeader opens the scan's header: NIfTI scans must be 4D with at least 3 volumes;
// time-series matrices (.csv, .tsv, .txt, .npy, paths only) are left to the pipeline.
func checkScanHeader(r *record, name string) error {
	lower := strings.ToLower(r.Scan)
	for _, ext := range []string{".csv", ".tsv", ".txt", ".npy"} {
		if strings.HasSuffix(lower, ext) {
			return nil
		}
	}
	nr, err := nifti.Open(r.Scan)
	if err != nil {
		return ipc.Errorf(ipc.CodeBadRequest, "scan %s: not a readable NIfTI image: %v", name, unwrapFileError(err))
	}
	h := nr.Header
	nr.Close()
	if h.Dim[0] < 4 || h.Volumes() < 3 {
		return ipc.Errorf(ipc.CodeBadRequest, "scan %s: %d volume(s); a resting-state analysis needs a 4D series of at least 3", name, h.Volumes())
	}
	r.SformCode, r.QformCode = h.SformCode, h.QformCode
	return nil
}

func unwrapPath(err error) error {
	var pe *os.PathError
	if errors.As(err, &pe) {
		return pe.Err
	}
	return err
}

func unwrapFileError(err error) error {
	var fe *nifti.FileError
	if errors.As(err, &fe) {
		return fe.Err
	}
	return err
}

// displayName keeps a name printable and short.
func displayName(s string) string {
	s = strings.Map(func(r rune) rune {
		if r < 0x20 || r == 0x7f {
			return -1
		}
		return r
	}, strings.TrimSpace(s))
	if r := []rune(s); len(r) > 200 {
		s = string(r[:200])
	}
	return s
}

// slots is how many jobs of a class may run at once: one GPU job (the backend sizes its
// blocks from the whole device's free memory), and DefaultCPUJobs CPU jobs.
func (d *Daemon) slots(class string) int {
	if class == "cuda" {
		return 1
	}
	return d.opt.CPUJobs
}

// scheduleLocked starts queued jobs, oldest first, while their class has a free slot.
func (d *Daemon) scheduleLocked() {
	defer d.recountLocked()
	if d.closed {
		return
	}
	rest := d.queue[:0]
	for _, j := range d.queue {
		if d.running[j.rec.Class] < d.slots(j.rec.Class) {
			d.startLocked(j)
		} else {
			rest = append(rest, j)
		}
	}
	clear(d.queue[len(rest):])
	d.queue = rest
}

func (d *Daemon) startLocked(j *job) {
	d.running[j.rec.Class]++
	ctx, cancel := context.WithCancel(d.base)
	j.cancel = cancel
	now := time.Now().UTC()
	j.rec.State, j.rec.Started = ipc.JobRunning, &now
	j.rec.Backend = j.rec.Class
	j.tracker = progress.NewTracker()
	j.tracker.OnNote = func(msg string) { d.note(j, msg) }
	if err := d.save(&j.rec); err != nil {
		d.log.Printf("job %s: %v", j.rec.ID, err)
	}
	d.publishLocked(j, "")
	d.logf(j, "started on %s", j.rec.Class)
	d.wg.Add(1)
	go d.run(ctx, j)
}

// run executes the pipeline on the job's own context (derived from the daemon's, never from a
// request's, so a client that disconnects does not stop it) and publishes progress meanwhile.
func (d *Daemon) run(ctx context.Context, j *job) {
	defer d.wg.Done()
	stopTicker := make(chan struct{})
	tickerDone := make(chan struct{})
	go func() {
		defer close(tickerDone)
		t := time.NewTicker(d.opt.EventInterval)
		defer t.Stop()
		for {
			select {
			case <-t.C:
				d.progress(j)
			case <-stopTicker:
				return
			}
		}
	}()
	t0 := time.Now()
	_, err := pipeline.Run(ctx, j.cfg, j.tracker)
	dropDICOMUpload(j)
	close(stopTicker)
	<-tickerDone

	d.mu.Lock()
	defer d.mu.Unlock()
	j.cancel()
	d.running[j.rec.Class]--
	switch {
	case err == nil:
		d.finishLocked(j, ipc.JobDone, "")
		d.logf(j, "done in %.1f s", time.Since(t0).Seconds())
	case j.cancelled && ctx.Err() != nil:
		d.finishLocked(j, ipc.JobCancelled, "")
		d.logf(j, "cancelled")
	case d.closed && ctx.Err() != nil:
		d.finishLocked(j, ipc.JobInterrupted, shutdownMessage)
		d.logf(j, "interrupted by shutdown")
	default:
		d.finishLocked(j, ipc.JobFailed, err.Error())
		d.logf(j, "failed: %s", d.redact(j, err.Error()))
	}
	d.scheduleLocked()
}

// finishLocked moves a job to a terminal state, saves it and publishes the terminal event.
func (d *Daemon) finishLocked(j *job, st ipc.JobState, msg string) {
	now := time.Now().UTC()
	j.rec.State, j.rec.Error, j.rec.Finished = st, msg, &now
	if st == ipc.JobDone {
		j.rec.Fraction = 1
	}
	j.rec.ETASeconds, j.rec.Beside = 0, nil
	if err := d.save(&j.rec); err != nil {
		d.log.Printf("job %s: %v", j.rec.ID, err)
	}
	d.publishLocked(j, "")
	j.ended()
	d.recountLocked()
	if len(d.queue) == 0 && d.activeRunning() == 0 {
		d.idle = time.Now()
	}
}

// progress publishes the tracker's current stage.
func (d *Daemon) progress(j *job) {
	d.mu.Lock()
	defer d.mu.Unlock()
	if j.rec.State != ipc.JobRunning {
		return
	}
	d.publishLocked(j, "")
}

// note publishes an engine note as the event's message.
func (d *Daemon) note(j *job, msg string) {
	d.mu.Lock()
	defer d.mu.Unlock()
	if j.rec.State != ipc.JobRunning {
		return
	}
	if d.opt.Verbose {
		d.logf(j, "note: %s", msg)
	}
	d.publishLocked(j, msg)
}

// publishLocked refreshes the job's progress fields from its tracker and sends an event.
func (d *Daemon) publishLocked(j *job, msg string) {
	ev := ipc.Event{Time: time.Now().UTC(), Message: msg}
	if j.rec.State == ipc.JobRunning && j.tracker != nil {
		s := j.tracker.Snapshot()
		j.rec.Stage, j.rec.Fraction, j.rec.ETASeconds = s.Stage, s.Fraction, s.ETA.Seconds()
		ev.Done, ev.Total = s.Done, s.Total
		j.rec.Beside = beside(j.tracker, s)
	} else {
		j.rec.Beside = nil
	}
	ev.Job = j.rec.Job
	j.events.publish(ev, msg == "" && !ev.Job.State.Terminal() && ev.Job.State == ipc.JobRunning)
}

// Cancel stops a queued job at once and a running one within a second (the pipeline checks
// its context between volumes, blocks and metric steps); it waits up to that long so that the
// job returned is usually already cancelled. Cancelling a cancelled job is a no-op; a job that
// finished otherwise is a conflict.
func (d *Daemon) Cancel(ctx context.Context, id string) (ipc.Job, error) {
	j, err := d.lookup(id)
	if err != nil {
		return ipc.Job{}, err
	}
	d.mu.Lock()
	switch j.rec.State {
	case ipc.JobQueued:
		for i, q := range d.queue {
			if q == j {
				d.queue = append(d.queue[:i], d.queue[i+1:]...)
				break
			}
		}
		j.cancelled = true
		d.finishLocked(j, ipc.JobCancelled, "")
		d.logf(j, "cancelled while queued")
		rec := j.rec.Job
		d.mu.Unlock()
		return rec, nil
	case ipc.JobRunning:
		j.cancelled = true
		j.cancel()
	case ipc.JobCancelled:
		rec := j.rec.Job
		d.mu.Unlock()
		return rec, nil
	default:
		st := j.rec.State
		d.mu.Unlock()
		return ipc.Job{}, ipc.Errorf(ipc.CodeConflict, "job %s already %s", id, st)
	}
	d.mu.Unlock()
	select {
	case <-j.done:
	case <-time.After(1500 * time.Millisecond):
	case <-ctx.Done():
	}
	d.mu.Lock()
	defer d.mu.Unlock()
	return j.rec.Job, nil
}

// Events streams a job's events: its current state first, then every state change and
// engine note, and progress at least every EventInterval while it runs, ending with the
// terminal event. Slow readers get the latest progress instead of every one.
func (d *Daemon) Events(ctx context.Context, id string) (<-chan ipc.Event, error) {
	j, err := d.lookup(id)
	if err != nil {
		return nil, err
	}
	d.mu.Lock()
	first := ipc.Event{Time: time.Now().UTC(), Job: j.rec.Job}
	if j.rec.State == ipc.JobRunning && j.tracker != nil {
		s := j.tracker.Snapshot()
		first.Done, first.Total = s.Done, s.Total
	}
	out := j.events.subscribe(ctx, first)
	d.mu.Unlock()
	return out, nil
}

// logf logs a line about a job; the scan's name only in verbose mode.
func (d *Daemon) logf(j *job, format string, args ...any) {
	prefix := "job " + j.rec.ID
	if d.opt.Verbose && j.rec.Name != "" {
		prefix += " (" + j.rec.Name + ")"
	}
	d.log.Printf("%s: %s", prefix, fmt.Sprintf(format, args...))
}

// redact removes the scan's and mask's paths and names from a message for the log (errors
// name their file, which may name a patient), unless verbose.
func (d *Daemon) redact(j *job, msg string) string {
	if d.opt.Verbose {
		return msg
	}
	for _, s := range []struct{ old, new string }{
		{j.rec.Scan, "<scan>"}, {j.rec.Mask, "<mask>"},
		{filepath.Base(j.rec.Scan), "<scan>"}, {filepath.Base(j.rec.Mask), "<mask>"}, {j.rec.Name, "<scan>"},
	} {
		if s.old != "" && s.old != "." {
			msg = strings.ReplaceAll(msg, s.old, s.new)
		}
	}
	return msg
}

// beside is the progress of the stages running beside main, the tracker's current stage
// (progress.Tracker.Snapshots: the main stage first when there is one, then the lanes).
func beside(t *progress.Tracker, main progress.Snapshot) []ipc.StageProgress {
	all := t.Snapshots()
	if main.Stage != "" && len(all) > 0 {
		all = all[1:]
	}
	var out []ipc.StageProgress
	for _, s := range all {
		out = append(out, ipc.StageProgress{Stage: s.Stage, Fraction: s.Fraction, Done: s.Done, Total: s.Total, ETASeconds: s.ETA.Seconds()})
	}
	return out
}
