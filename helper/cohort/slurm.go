package cohort

// Running a cohort on a Slurm cluster: the per-subject step (RunSubject through
// `hubscope-helper cohort … --subject S`) becomes the tasks of one Slurm job array, and the
// group step (`cohort … --table-only`: the group-mean networks and the table) a job that
// depends on them (afterok). HubScope keeps no
// scheduler of its own: Slurm runs the tasks, the bundles' completion markers say what is done,
// and a rerun submits only the subjects that are neither complete nor still queued. The
// folder DERIV/slurm holds the scripts, the task logs and state.json (every submission's job
// ids and which subjects each task holds), which --status reads together with squeue,
// scontrol and, where accounting is kept, sacct. README "Running a cohort on a cluster" describes it.

import (
	"bytes"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/hubscope/hubscope/helper/bids/derivatives"
	"github.com/hubscope/hubscope/helper/bundle"
	"github.com/hubscope/hubscope/ipc/schema"
)

// SlurmDir is the folder inside the derivatives folder that holds the Slurm scripts, logs and state.
const SlurmDir = "slurm"

// SlurmOptions are a Slurm submission's resources and what every task runs.
type SlurmOptions struct {
	Helper  string   // absolute path of the hubscope-helper binary the tasks run
	Args    []string // the analysis flags, the same for every task (the markers record the settings)
	WorkDir string   // the tasks' working folder (relative paths in Args resolve from it)

	Partition   string
	Account     string
	Mem         string // per task, as sbatch's --mem: 4G, 4000M …
	Time        string // per task, as sbatch's --time: minutes, h:m:s, d-h …
	GPUsPerTask int    // → --gres=gpu:N
	CPUsPerTask int
	ArrayMax    int // tasks running at once (--array=…%K); 0: Slurm's limit
	PerTask     int // subjects per array task (≥ 1)
	SbatchArgs  []string
	DryRun      bool
	// NormOut, when set, makes the group step also build a normative folder there from the
	// cohort (norm build DERIV --out NormOut), of the runs whose participants have NormGroup
	// in participants.tsv's "diagnosis" column ("" = every run).
	NormOut, NormGroup string
}

var (
	reName  = regexp.MustCompile(`^[A-Za-z0-9_.-]+$`)
	reParts = regexp.MustCompile(`^[A-Za-z0-9_.-]+(,[A-Za-z0-9_.-]+)*$`)
	reMem   = regexp.MustCompile(`^[0-9]+[KMGT]?$`)
	reTime  = regexp.MustCompile(`^([0-9]+-)?[0-9]+(:[0-9]+){0,2}$`)
	reArg   = regexp.MustCompile(`^--[a-z][a-z0-9-]*(=[^\s'"\\$` + "`" + `]+)?$`)
)

// Validate checks every value before it goes into a script, naming the flag and the problem.
func (o SlurmOptions) Validate() error {
	bad := func(flag, val, want string) error {
		return fmt.Errorf("--%s %q: %s", flag, val, want)
	}
	if o.Partition != "" && !reParts.MatchString(o.Partition) {
		return bad("partition", o.Partition, "want a partition name (letters, digits, _ . -), or several separated by commas")
	}
	if o.Account != "" && !reName.MatchString(o.Account) {
		return bad("account", o.Account, "want an account name (letters, digits, _ . -)")
	}
	if o.Mem != "" && !reMem.MatchString(o.Mem) {
		return bad("mem", o.Mem, "want a size as sbatch takes it, e.g. 4G or 4000M")
	}
	if o.Time != "" && !reTime.MatchString(o.Time) {
		return bad("time", o.Time, "want a time limit as sbatch takes it: minutes, h:m:s or d-h:m:s")
	}
	for _, v := range [][2]any{{"gpus-per-task", o.GPUsPerTask}, {"cpus-per-task", o.CPUsPerTask}, {"array-max", o.ArrayMax}} {
		if n := v[1].(int); n < 0 || n > 100000 {
			return bad(v[0].(string), strconv.Itoa(n), "want a whole number from 0")
		}
	}
	if o.PerTask < 1 || o.PerTask > 100000 {
		return bad("subjects-per-task", strconv.Itoa(o.PerTask), "want a whole number from 1")
	}
	for _, a := range o.SbatchArgs {
		if !reArg.MatchString(a) {
			return bad("sbatch-arg", a, "want one sbatch option as --name or --name=value, without spaces, quotes, $ or backslashes")
		}
		name, _, _ := strings.Cut(a, "=")
		switch name {
		case "--array", "--dependency", "--output", "--error", "--chdir", "--wrap", "--parsable":
			return bad("sbatch-arg", a, "HubScope sets "+name+" itself")
		}
	}
	if o.NormGroup != "" && o.NormOut == "" {
		return errors.New("--norm-group needs --norm-out NORM")
	}
	if !filepath.IsAbs(o.Helper) || !filepath.IsAbs(o.WorkDir) {
		return errors.New("slurm: the helper binary and the working folder must be absolute paths")
	}
	return nil
}

// SlurmState is DERIV/slurm/state.json (schema.SlurmState).
type SlurmState = schema.SlurmState

// SlurmSubmission is one sbatch of the array and its group step (schema.SlurmSubmission).
type SlurmSubmission = schema.SlurmSubmission

// SlurmPlan is what a submission would do.
type SlurmPlan struct {
	Subjects    []string          // every subject of the selection
	Complete    []string          // subjects whose bundles are complete with these settings
	Active      map[string]string // subjects still queued or running: their task id (JOB_TASK)
	Submit      []string          // subjects for the new array
	Tasks       [][]string        // Submit split into array tasks
	Reasons     map[string]string // why a subject is submitted again
	Dir         string            // the new submission's folder (absolute)
	ArrayScript string
	GroupScript string
	token       string
	settings    map[string]any
}

// subjectsOf groups the runs by subject, in the order Runs lists them.
func subjectsOf(runs []derivatives.Run) ([]string, map[string][]derivatives.Run) {
	by := map[string][]derivatives.Run{}
	var order []string
	for _, r := range runs {
		if _, ok := by[r.Subject]; !ok {
			order = append(order, r.Subject)
		}
		by[r.Subject] = append(by[r.Subject], r)
	}
	return order, by
}

// runComplete says whether r's bundle is complete and made from its scan with opt's settings
// (as RunSubject decides to skip it); if not, why.
func runComplete(opt Options, r derivatives.Run) (string, bool) {
	bdir := BundleDir(opt.Out, r)
	if _, err := os.Stat(filepath.Join(bdir, MarkerFile)); err != nil {
		if _, e := os.Stat(bdir); e == nil {
			return "bundle incomplete: no completion marker", false
		}
		return "not analysed yet", false
	}
	cfg := opt.Config
	cfg.Scan, cfg.Out, cfg.Overwrite = r.Path, bdir, true
	in, err := bundle.DescribeInput(r.Path)
	if err != nil {
		return err.Error(), false
	}
	return checkMarker(filepath.Join(opt.Out, r.Dir()), bdir, in, Settings(cfg))
}

// ReadSlurmState reads DERIV/slurm/state.json; a folder without one has no submissions.
func ReadSlurmState(deriv string) (*SlurmState, error) {
	p := filepath.Join(deriv, SlurmDir, schema.SlurmStateFile)
	b, err := os.ReadFile(p)
	if errors.Is(err, os.ErrNotExist) {
		return &SlurmState{}, nil
	}
	if err != nil {
		return nil, err
	}
	var st SlurmState
	if err := json.Unmarshal(b, &st); err != nil {
		return nil, fmt.Errorf("%s: %w", p, err)
	}
	return &st, nil
}

func writeSlurmState(deriv string, st *SlurmState) error {
	b, _ := json.MarshalIndent(st, "", "  ")
	p := filepath.Join(deriv, SlurmDir, schema.SlurmStateFile)
	if err := os.WriteFile(p+".tmp", append(b, '\n'), 0o644); err != nil {
		return err
	}
	return os.Rename(p+".tmp", p)
}

// PlanSlurm decides which subjects a submission sends (neither complete with these settings nor
// still queued or running from an earlier submission) and writes nothing; its scripts are those
// SubmitSlurm would submit.
func PlanSlurm(opt Options, so SlurmOptions) (*SlurmPlan, error) {
	if err := so.Validate(); err != nil {
		return nil, err
	}
	runs, err := Runs(opt)
	if err != nil {
		return nil, err
	}
	st, err := ReadSlurmState(opt.Out)
	if err != nil {
		return nil, err
	}
	q := querySlurm(st)
	p := &SlurmPlan{Active: map[string]string{}, Reasons: map[string]string{}}
	var by map[string][]derivatives.Run
	p.Subjects, by = subjectsOf(runs)
	latest := latestTasks(st)
	for _, s := range p.Subjects {
		why, done := "", true
		for _, r := range by[s] {
			if reason, ok := runComplete(opt, r); !ok {
				why, done = r.ID()+": "+reason, false
				break
			}
		}
		if done {
			p.Complete = append(p.Complete, s)
			continue
		}
		if t, ok := latest[s]; ok {
			if js, ok := q.tasks[t]; ok && (js.State == "PENDING" || js.State == "RUNNING" || js.State == "CONFIGURING" || js.State == "COMPLETING" || js.State == "REQUEUED" || js.State == "SUSPENDED") {
				p.Active[s] = t
				continue
			}
		}
		p.Submit = append(p.Submit, s)
		p.Reasons[s] = why
	}
	for i := 0; i < len(p.Submit); i += so.PerTask {
		p.Tasks = append(p.Tasks, p.Submit[i:min(i+so.PerTask, len(p.Submit))])
	}
	deriv, err := filepath.Abs(opt.Out)
	if err != nil {
		return nil, err
	}
	p.Dir = filepath.Join(deriv, SlurmDir, fmt.Sprintf("submit-%03d", len(st.Submissions)+1))
	// sbatch reads #SBATCH lines itself, without the shell's quoting.
	for _, d := range []string{p.Dir, so.WorkDir} {
		if strings.ContainsAny(d, " \t\n'\"\\$`%") {
			return nil, fmt.Errorf("%s: a folder named in #SBATCH lines cannot hold spaces, quotes, $, %% or backslashes", d)
		}
	}
	var tok [8]byte
	rand.Read(tok[:])
	p.token = hex.EncodeToString(tok[:])
	cfg := opt.Config
	cfg.Scan, cfg.Out = "", ""
	p.settings = Settings(cfg)
	// The tasks run in so.WorkDir (--chdir) with the paths as given, so that every path a
	// bundle records is spelled as a local run from the same folder spells it.
	if len(p.Tasks) > 0 {
		p.ArrayScript = arrayScript(so, opt.BIDS, opt.Out, deriv, opt.Task, p)
	}
	p.GroupScript = groupScript(so, opt.BIDS, opt.Out, opt.Task, p.Dir, opt.GroupMean != GroupMeanNone)
	return p, nil
}

// sq quotes s for bash (single quotes; a single quote inside as '\”).
func sq(s string) string { return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'" }

func header(so SlurmOptions, name, output string) []string {
	h := []string{"#!/bin/bash", "#SBATCH --job-name=" + name, "#SBATCH --output=" + output, "#SBATCH --chdir=" + so.WorkDir}
	if so.Partition != "" {
		h = append(h, "#SBATCH --partition="+so.Partition)
	}
	if so.Account != "" {
		h = append(h, "#SBATCH --account="+so.Account)
	}
	if so.Time != "" {
		h = append(h, "#SBATCH --time="+so.Time)
	}
	return h
}

func command(so SlurmOptions, bids, deriv, task string, extra ...string) string {
	parts := []string{`"$helper"`, "cohort", sq(bids), "--out", sq(deriv)}
	if task != "" {
		parts = append(parts, "--task", sq(task))
	}
	for _, a := range so.Args {
		parts = append(parts, sq(a))
	}
	return strings.Join(append(parts, extra...), " ")
}

// arrayScript is the job array: task i analyses the subjects of p.Tasks[i] with the per-subject
// step, after checking that it sees the same output folder as the submitting machine.
func arrayScript(so SlurmOptions, bids, deriv, absDeriv, task string, p *SlurmPlan) string {
	// The output folder's path names are checked for characters sbatch would not keep in a
	// #SBATCH line; Validate has checked the other values.
	h := header(so, "hubscope-cohort", filepath.Join(p.Dir, "task-%a.log"))
	arr := fmt.Sprintf("#SBATCH --array=0-%d", len(p.Tasks)-1)
	if so.ArrayMax > 0 {
		arr += fmt.Sprintf("%%%d", so.ArrayMax)
	}
	h = append(h, arr, "#SBATCH --ntasks=1")
	if so.CPUsPerTask > 0 {
		h = append(h, fmt.Sprintf("#SBATCH --cpus-per-task=%d", so.CPUsPerTask))
	}
	if so.Mem != "" {
		h = append(h, "#SBATCH --mem="+so.Mem)
	}
	if so.GPUsPerTask > 0 {
		h = append(h, fmt.Sprintf("#SBATCH --gres=gpu:%d", so.GPUsPerTask))
	}
	for _, a := range so.SbatchArgs {
		h = append(h, "#SBATCH "+a)
	}
	var b strings.Builder
	b.WriteString(strings.Join(h, "\n") + "\n")
	fmt.Fprintf(&b, `# Written by hubscope-helper cohort --slurm: one array task per line of "tasks" below.
set -u
helper=%s
deriv=%s
token=%s
tasks=(
`, sq(so.Helper), sq(absDeriv), sq(filepath.Join(p.Dir, "token")+":"+p.token))
	for _, t := range p.Tasks {
		fmt.Fprintf(&b, "  %s\n", sq(strings.Join(t, " ")))
	}
	b.WriteString(`)
id="${SLURM_ARRAY_JOB_ID:-?}_${SLURM_ARRAY_TASK_ID:-?}"
echo "hubscope task $id on $(hostname) started $(date -u +%s.%N)"
# A node that does not see the submitting machine's output folder (not on a shared
# filesystem) finds no token there, or another one: the task fails saying so.
if [ "$(cat "${token%%:*}" 2>/dev/null)" != "${token#*:}" ]; then
  echo "hubscope task $id: the output folder $deriv is not the one the cohort was submitted from (no submission token ${token%%:*} visible on $(hostname)): put it on a filesystem the nodes share" >&2
  exit 3
fi
if [ -n "${CUDA_VISIBLE_DEVICES:-}" ] && [ "${CUDA_VISIBLE_DEVICES}" != NoDevFiles ]; then
  echo "hubscope task $id: GPU from Slurm: CUDA_VISIBLE_DEVICES=$CUDA_VISIBLE_DEVICES"
else
  echo "hubscope task $id: no GPU from Slurm (CUDA_VISIBLE_DEVICES unset): the CPU backend runs unless --backend names another"
fi
status=0
for s in ${tasks[$SLURM_ARRAY_TASK_ID]}; do
  echo "hubscope task $id: sub-$s"
  `)
	b.WriteString(command(so, bids, deriv, task, "--jobs", "1", "--subject", `"$s"`))
	b.WriteString(` || status=1
done
echo "hubscope task $id finished $(date -u +%s.%N) status $status"
exit $status
`)
	return b.String()
}

// groupScript is the group step: the group-mean networks over the complete bundles (unless
// groupMean is false; they get an array task's cores, memory and GPUs) and the table (it
// refuses, naming them, subjects whose bundles are missing or incomplete).
func groupScript(so SlurmOptions, bids, deriv, task, dir string, groupMean bool) string {
	h := header(so, "hubscope-cohort-group", filepath.Join(dir, "group.log"))
	h = append(h, "#SBATCH --ntasks=1")
	if groupMean {
		if so.CPUsPerTask > 0 {
			h = append(h, fmt.Sprintf("#SBATCH --cpus-per-task=%d", so.CPUsPerTask))
		}
		if so.Mem != "" {
			h = append(h, "#SBATCH --mem="+so.Mem)
		}
		if so.GPUsPerTask > 0 {
			h = append(h, fmt.Sprintf("#SBATCH --gres=gpu:%d", so.GPUsPerTask))
		}
	}
	var b strings.Builder
	b.WriteString(strings.Join(h, "\n") + "\n")
	fmt.Fprintf(&b, `# Written by hubscope-helper cohort --slurm: the group step, after every array task succeeded.
set -u
helper=%s
echo "hubscope group step ${SLURM_JOB_ID:-?} on $(hostname) started $(date -u +%%s.%%N)"
%s
status=$?
echo "hubscope group step: group mean and table, status $status"
`, sq(so.Helper), command(so, bids, deriv, task, "--table-only"))
	if so.NormOut != "" {
		norm := []string{`"$helper"`, "norm", "build", sq(deriv), "--out", sq(so.NormOut)}
		if so.NormGroup != "" {
			norm = append(norm, "--group", sq(so.NormGroup))
		}
		fmt.Fprintf(&b, `if [ $status -eq 0 ]; then
  %s
  status=$?
fi
`, strings.Join(norm, " "))
	}
	b.WriteString(`echo "hubscope group step finished $(date -u +%s.%N) status $status"
exit $status
`)
	return b.String()
}

// SlurmSubmitted is what SubmitSlurm did.
type SlurmSubmitted struct {
	Plan      *SlurmPlan
	ArrayJob  string // "" when every subject was complete or queued
	GroupJob  string
	Cancelled []string // earlier group steps cancelled (their dependencies can no longer hold)
}

// SubmitSlurm submits p: the array (when subjects need work), then the group step with
// --dependency=afterok on the new array and on every earlier task still queued or running.
// An earlier group step still pending is cancelled first: the new one replaces it.
func SubmitSlurm(opt Options, p *SlurmPlan) (*SlurmSubmitted, error) {
	sbatch, err := exec.LookPath("sbatch")
	if err != nil {
		return nil, errors.New("sbatch not found on PATH: --slurm needs Slurm's client commands on this machine (a local run needs none: leave out --slurm)")
	}
	st, err := ReadSlurmState(opt.Out)
	if err != nil {
		return nil, err
	}
	if err := os.MkdirAll(p.Dir, 0o755); err != nil {
		return nil, err
	}
	absOut, _ := filepath.Abs(opt.Out)
	rel, _ := filepath.Rel(filepath.Join(absOut, SlurmDir), p.Dir)
	if !filepath.IsLocal(rel) {
		rel = p.Dir
	}
	bids, _ := filepath.Abs(opt.BIDS)
	st.BIDS, st.Task, st.Settings = bids, opt.Task, p.settings
	sub := SlurmSubmission{Dir: rel, Submitted: time.Now().UTC(), Tasks: p.Tasks}
	res := &SlurmSubmitted{Plan: p}
	write := func(name, text string) (string, error) {
		f := filepath.Join(p.Dir, name)
		return f, os.WriteFile(f, []byte(text), 0o755)
	}
	if err := os.WriteFile(filepath.Join(p.Dir, "token"), []byte(p.token), 0o644); err != nil {
		return nil, err
	}
	groupFile, err := write("group.sh", p.GroupScript)
	if err != nil {
		return nil, err
	}
	var deps []string
	if len(p.Tasks) > 0 {
		arrayFile, err := write("array.sh", p.ArrayScript)
		if err != nil {
			return nil, err
		}
		if res.ArrayJob, err = runSbatch(sbatch, arrayFile); err != nil {
			os.RemoveAll(p.Dir) // nothing was submitted: no trace of it
			return nil, err
		}
		sub.ArrayJob = res.ArrayJob
		deps = append(deps, res.ArrayJob)
	}
	var active []string
	for _, t := range p.Active {
		active = append(active, t)
	}
	sort.Strings(active)
	deps = append(deps, active...)
	// Earlier group steps that have not run are replaced by this one.
	for _, s := range st.Submissions {
		if s.GroupJob == "" {
			continue
		}
		if js, ok := querySlurm(&SlurmState{Submissions: []SlurmSubmission{s}}).tasks[s.GroupJob]; ok && js.State == "PENDING" {
			if out, err := exec.Command("scancel", s.GroupJob).CombinedOutput(); err == nil {
				res.Cancelled = append(res.Cancelled, s.GroupJob)
			} else {
				return nil, fmt.Errorf("scancel %s (the earlier group step): %s", s.GroupJob, oneLine(out, err))
			}
		}
	}
	args := []string{}
	if len(deps) > 0 {
		args = append(args, "--dependency=afterok:"+strings.Join(deps, ":"))
	}
	gj, gerr := runSbatch(sbatch, append(args, groupFile)...)
	sub.GroupJob, res.GroupJob = gj, gj
	st.Submissions = append(st.Submissions, sub)
	if err := writeSlurmState(opt.Out, st); err != nil {
		return nil, err
	}
	if gerr != nil {
		return res, fmt.Errorf("%w (the array job %s was submitted; run the same command again to submit the group step)", gerr, res.ArrayJob)
	}
	return res, nil
}

// runSbatch submits a script and returns its job id; a refusal is sbatch's own message, verbatim, on one line.
func runSbatch(sbatch string, args ...string) (string, error) {
	cmd := exec.Command(sbatch, append([]string{"--parsable"}, args...)...)
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	if err := cmd.Run(); err != nil {
		return "", fmt.Errorf("sbatch refused %s: %s", args[len(args)-1], oneLine(errb.Bytes(), err))
	}
	id, _, _ := strings.Cut(strings.TrimSpace(out.String()), ";")
	if id == "" {
		return "", fmt.Errorf("sbatch gave no job id for %s: %s", args[len(args)-1], oneLine(errb.Bytes(), nil))
	}
	return id, nil
}

// oneLine joins a command's message onto one line ("; " between its lines).
func oneLine(b []byte, err error) string {
	var lines []string
	for _, l := range strings.Split(string(b), "\n") {
		if l = strings.TrimSpace(l); l != "" {
			lines = append(lines, l)
		}
	}
	if len(lines) == 0 && err != nil {
		return err.Error()
	}
	return strings.Join(lines, "; ")
}

// jobState is one job's or array task's state as Slurm reports it.
type jobState struct {
	State, Reason, ExitCode string
}

type slurmQuery struct {
	tasks map[string]jobState // "JOB_TASK" for array tasks, "JOB" for the group steps
	notes []string
}

// latestTasks maps each subject to the task id of the latest submission that held it.
func latestTasks(st *SlurmState) map[string]string {
	out := map[string]string{}
	for _, s := range st.Submissions {
		if s.ArrayJob == "" {
			continue
		}
		for i, t := range s.Tasks {
			for _, subj := range t {
				out[subj] = fmt.Sprintf("%s_%d", s.ArrayJob, i)
			}
		}
	}
	return out
}

// querySlurm asks squeue (queued and running), scontrol (jobs that ended in the last
// MinJobAge) and sacct (where accounting is kept) about st's jobs; a command that is missing
// or fails leaves a note and the others' answers.
func querySlurm(st *SlurmState) slurmQuery {
	q := slurmQuery{tasks: map[string]jobState{}}
	var ids []string
	for _, s := range st.Submissions {
		for _, j := range []string{s.ArrayJob, s.GroupJob} {
			if j != "" {
				ids = append(ids, j)
			}
		}
	}
	if len(ids) == 0 {
		return q
	}
	want := map[string]bool{}
	for _, id := range ids {
		want[id] = true
	}
	// sacct first; scontrol and squeue then overwrite with the live state.
	if _, err := exec.LookPath("sacct"); err == nil {
		out, err := exec.Command("sacct", "-n", "-P", "-X", "-j", strings.Join(ids, ","), "-o", "JobID,State,ExitCode,Reason").CombinedOutput()
		if err == nil {
			for _, l := range strings.Split(string(out), "\n") {
				f := strings.Split(l, "|")
				if len(f) < 3 {
					continue
				}
				state, _, _ := strings.Cut(f[1], " ") // "CANCELLED by 0"
				js := jobState{State: state, ExitCode: f[2]}
				if len(f) > 3 {
					js.Reason = f[3]
				}
				q.tasks[f[0]] = js
			}
		} else {
			q.notes = append(q.notes, "no accounting (sacct: "+oneLine(out, err)+"): tasks that ended are known while slurmctld keeps them (MinJobAge), then from their bundles and logs")
		}
	}
	for _, id := range ids {
		out, err := exec.Command("scontrol", "-o", "show", "job", id).CombinedOutput()
		if err != nil {
			continue // ended before Slurm's MinJobAge: sacct or the bundles tell
		}
		for _, l := range strings.Split(string(out), "\n") {
			kv := map[string]string{}
			for _, f := range strings.Fields(l) {
				if k, v, ok := strings.Cut(f, "="); ok {
					kv[k] = v
				}
			}
			job := kv["JobId"]
			if a, t := kv["ArrayJobId"], kv["ArrayTaskId"]; a != "" && t != "" && !strings.ContainsAny(t, "-,%") {
				job = a + "_" + t
			} else if a != "" && t != "" {
				continue // the array's pending remainder: squeue -r lists its tasks
			}
			if job != "" {
				q.tasks[job] = jobState{State: kv["JobState"], Reason: kv["Reason"], ExitCode: kv["ExitCode"]}
			}
		}
	}
	if _, err := exec.LookPath("squeue"); err == nil {
		out, err := exec.Command("squeue", "-h", "-r", "-o", "%F|%K|%i|%T|%r").CombinedOutput()
		if err != nil {
			q.notes = append(q.notes, "squeue: "+oneLine(out, err))
		}
		for _, l := range strings.Split(string(out), "\n") {
			f := strings.Split(l, "|")
			if len(f) != 5 || !want[f[0]] {
				continue
			}
			id := f[2]
			if f[1] != "N/A" && f[1] != "" {
				id = f[0] + "_" + f[1]
			}
			q.tasks[id] = jobState{State: f[3], Reason: f[4], ExitCode: q.tasks[id].ExitCode}
		}
	} else {
		q.notes = append(q.notes, "squeue not found on PATH: queued and running tasks are not known")
	}
	return q
}

// SubjectStatus is one subject's state for --status.
type SubjectStatus struct {
	Subject string
	State   string // done, running, pending, failed, missing (never submitted)
	Task    string // JOB_TASK of the latest submission holding it
	Reason  string
	Log     string
}

// SlurmReport is --status's answer.
type SlurmReport struct {
	Subjects []SubjectStatus
	Counts   map[string]int
	Group    string // the latest group step: job id and state
	Notes    []string
}

// SlurmStatus reports every subject of a derivatives folder's Slurm submissions: done (every
// run's bundle complete, as its marker records, with the settings submitted), running and
// pending (squeue, with Slurm's reason), failed (the task ended without a complete bundle:
// Slurm's state and exit code, the log's last line and the log's path), missing (never
// submitted).
func SlurmStatus(deriv string) (*SlurmReport, error) {
	st, err := ReadSlurmState(deriv)
	if err != nil {
		return nil, err
	}
	if st.BIDS == "" {
		return nil, fmt.Errorf("%s: no Slurm submission recorded (no %s)", deriv, filepath.Join(deriv, SlurmDir, schema.SlurmStateFile))
	}
	runs, err := Runs(Options{BIDS: st.BIDS, Task: st.Task, Out: deriv})
	if err != nil {
		return nil, err
	}
	q := querySlurm(st)
	rep := &SlurmReport{Counts: map[string]int{}, Notes: q.notes}
	order, by := subjectsOf(runs)
	latest := latestTasks(st)
	logOf := map[string]string{}
	for _, s := range st.Submissions {
		for i, t := range s.Tasks {
			for _, subj := range t {
				logOf[subj] = filepath.Join(deriv, SlurmDir, s.Dir, fmt.Sprintf("task-%d.log", i))
			}
		}
	}
	for _, s := range order {
		ss := SubjectStatus{Subject: "sub-" + s, Task: latest[s], Log: logOf[s]}
		why, done := "", true
		for _, r := range by[s] {
			reason, ok := VerifyBundle(deriv, r)
			if ok {
				if m, err := readMarker(BundleDir(deriv, r)); err == nil && len(st.Settings) > 0 {
					if d := Diff(m.Settings, st.Settings); len(d) > 0 {
						reason, ok = "made with other settings: "+strings.Join(d, "; "), false
					}
				}
			}
			if !ok {
				why, done = r.ID()+": "+reason, false
				break
			}
		}
		js, known := q.tasks[ss.Task]
		switch {
		case done:
			ss.State = "done"
		case ss.Task == "":
			ss.State, ss.Reason = "missing", "never submitted ("+why+")"
		case known && (js.State == "RUNNING" || js.State == "COMPLETING" || js.State == "CONFIGURING"):
			ss.State = "running"
		case known && (js.State == "PENDING" || js.State == "REQUEUED" || js.State == "SUSPENDED"):
			ss.State, ss.Reason = "pending", js.Reason
		default:
			ss.State = "failed"
			var parts []string
			if known {
				parts = append(parts, js.State)
				if js.ExitCode != "" {
					parts = append(parts, "exit "+js.ExitCode)
				}
				if js.Reason != "" && js.Reason != "None" {
					parts = append(parts, js.Reason)
				}
			}
			last := lastLine(ss.Log)
			switch {
			case !known && last == "":
				// Slurm drops a pending array task that is cancelled without a trace.
				parts = append(parts, "never started (cancelled while pending, or Slurm no longer keeps its record)")
			case !known:
				parts = append(parts, "the task is no longer queued")
			}
			parts = append(parts, why)
			if last != "" {
				parts = append(parts, "log: "+last)
			} else if known && js.State != "CANCELLED" {
				parts = append(parts, "no log: the node could not write into the output folder (is it on a filesystem the nodes share?)")
			}
			ss.Reason = strings.Join(parts, "; ")
		}
		rep.Counts[ss.State]++
		rep.Subjects = append(rep.Subjects, ss)
	}
	if n := len(st.Submissions); n > 0 {
		if g := st.Submissions[n-1].GroupJob; g != "" {
			js, ok := q.tasks[g]
			state := "ended"
			if ok {
				state = js.State
				if js.Reason != "" && js.Reason != "None" {
					state += " (" + js.Reason + ")"
				}
			}
			if _, err := os.Stat(filepath.Join(deriv, TableFile)); err == nil && (!ok || js.State == "COMPLETED") {
				state += ", " + TableFile + " written"
			}
			if ms, _ := filepath.Glob(filepath.Join(deriv, GroupDir, "*_hubscope", MarkerFile)); len(ms) > 0 && (!ok || js.State == "COMPLETED") {
				var gm []string
				for _, m := range ms {
					gm = append(gm, filepath.ToSlash(filepath.Join(GroupDir, filepath.Base(filepath.Dir(m)))))
				}
				state += ", group mean " + strings.Join(gm, ", ")
			}
			rep.Group = g + " " + state + "; log " + filepath.Join(deriv, SlurmDir, st.Submissions[n-1].Dir, "group.log")
		}
	}
	return rep, nil
}

func readMarker(dir string) (*Marker, error) {
	b, err := os.ReadFile(filepath.Join(dir, MarkerFile))
	if err != nil {
		return nil, err
	}
	var m Marker
	return &m, json.Unmarshal(b, &m)
}

// lastLine is the last non-empty line of a log file ("" when there is none).
func lastLine(path string) string {
	if path == "" {
		return ""
	}
	b, err := os.ReadFile(path)
	if err != nil {
		return ""
	}
	lines := strings.Split(strings.TrimSpace(string(b)), "\n")
	return strings.TrimSpace(lines[len(lines)-1])
}
