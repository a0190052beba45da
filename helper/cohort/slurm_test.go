package cohort

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/hubscope/hubscope/helper/pipeline"
	"github.com/hubscope/hubscope/ipc/settings"
)

func goodSlurm(t *testing.T) SlurmOptions {
	return SlurmOptions{Helper: "/opt/hub scope/hubscope-helper", WorkDir: t.TempDir(), PerTask: 1,
		Partition: "gpu,cpu", Account: "lab_1", Mem: "4G", Time: "1-02:00:00", GPUsPerTask: 1, CPUsPerTask: 4,
		ArrayMax: 10, SbatchArgs: []string{"--qos=long", "--exclusive"}}
}

func TestSlurmValidate(t *testing.T) {
	if err := goodSlurm(t).Validate(); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		edit func(*SlurmOptions)
		want string
	}{
		{func(o *SlurmOptions) { o.Partition = "gpu; rm -rf /" }, "--partition"},
		{func(o *SlurmOptions) { o.Account = "a b" }, "--account"},
		{func(o *SlurmOptions) { o.Mem = "4GB" }, "--mem"},
		{func(o *SlurmOptions) { o.Time = "1h" }, "--time"},
		{func(o *SlurmOptions) { o.Time = "10\n#SBATCH --x" }, "--time"},
		{func(o *SlurmOptions) { o.GPUsPerTask = -1 }, "--gpus-per-task"},
		{func(o *SlurmOptions) { o.CPUsPerTask = -2 }, "--cpus-per-task"},
		{func(o *SlurmOptions) { o.ArrayMax = -1 }, "--array-max"},
		{func(o *SlurmOptions) { o.PerTask = 0 }, "--subjects-per-task"},
		{func(o *SlurmOptions) { o.SbatchArgs = []string{"--qos=$(id)"} }, "--sbatch-arg"},
		{func(o *SlurmOptions) { o.SbatchArgs = []string{"-p x"} }, "--sbatch-arg"},
		{func(o *SlurmOptions) { o.SbatchArgs = []string{"--dependency=afterok:1"} }, "sets --dependency itself"},
		{func(o *SlurmOptions) { o.Helper = "hubscope-helper" }, "absolute"},
	} {
		o := goodSlurm(t)
		c.edit(&o)
		if err := o.Validate(); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%+v: got %v, want an error naming %s", o, err, c.want)
		}
	}
}

// sq's quoting survives bash: every string comes back as it went in.
func TestSlurmShellQuote(t *testing.T) {
	bash, err := exec.LookPath("bash")
	if err != nil {
		t.Skip("no bash")
	}
	for _, s := range []string{"plain", "it's", `a "b" $HOME \n`, "new\nline", "`id`", "''", ""} {
		out, err := exec.Command(bash, "-c", "printf %s "+sq(s)).Output()
		if err != nil || string(out) != s {
			t.Errorf("%q through bash: %q, %v", s, out, err)
		}
	}
}

// A plan and a submission through a stand-in sbatch: only the incomplete subjects go into the
// array, the scripts pass bash -n and carry the resources and the fixed settings, the group step
// depends on the array (afterok), a refusal is sbatch's message on one line and leaves nothing.
func TestSlurmPlanSubmit(t *testing.T) {
	bash, err := exec.LookPath("bash")
	if err != nil {
		t.Skip("no bash")
	}
	bids := phantomCohort(t, 3)
	out := filepath.Join(t.TempDir(), "deriv")
	cfg := pipeline.Defaults()
	cfg.Backend, cfg.Metrics = "cpu", settings.MetricsNone
	opt := Options{BIDS: bids, Out: out, Config: cfg, Subject: "02"}
	if st, err := Run(context.Background(), opt, nil); err != nil || Failed(st) != nil {
		t.Fatal(err, Failed(st))
	}
	opt.Subject = ""
	so := goodSlurm(t)
	so.Args = []string{"--backend=cpu", "--metrics=none", "--mask=it's here.nii.gz"}
	so.PerTask = 2
	so.NormOut, so.NormGroup = "norm dir", "control"
	p, err := PlanSlurm(opt, so)
	if err != nil {
		t.Fatal(err)
	}
	if strings.Join(p.Complete, " ") != "02" || strings.Join(p.Submit, " ") != "01 03" || len(p.Tasks) != 1 {
		t.Fatalf("complete %v, submit %v, tasks %v", p.Complete, p.Submit, p.Tasks)
	}
	for _, want := range []string{"#SBATCH --array=0-0%10", "#SBATCH --gres=gpu:1", "#SBATCH --cpus-per-task=4", "#SBATCH --mem=4G",
		"#SBATCH --time=1-02:00:00", "#SBATCH --partition=gpu,cpu", "#SBATCH --account=lab_1", "#SBATCH --qos=long",
		"  '01 03'", `'--mask=it'\''s here.nii.gz'`, "helper='/opt/hub scope/hubscope-helper'", "CUDA_VISIBLE_DEVICES"} {
		if !strings.Contains(p.ArrayScript, want) {
			t.Errorf("array script lacks %q:\n%s", want, p.ArrayScript)
		}
	}
	if !strings.Contains(p.GroupScript, "--table-only") || !strings.Contains(p.GroupScript, `norm build `+sq(out)+` --out 'norm dir' --group 'control'`) {
		t.Errorf("group script:\n%s", p.GroupScript)
	}
	// The group step builds the group-mean network: it gets an array task's cores, memory and
	// GPUs, unless --group-mean none leaves it with the table alone.
	for _, want := range []string{"#SBATCH --gres=gpu:1", "#SBATCH --cpus-per-task=4", "#SBATCH --mem=4G"} {
		if !strings.Contains(p.GroupScript, want) {
			t.Errorf("group script lacks %q:\n%s", want, p.GroupScript)
		}
	}
	noMean := opt
	noMean.GroupMean = GroupMeanNone
	if pn, err := PlanSlurm(noMean, so); err != nil {
		t.Error(err)
	} else if strings.Contains(pn.GroupScript, "--gres") {
		t.Errorf("group step without the group mean:\n%s", pn.GroupScript)
	}
	for _, s := range []string{p.ArrayScript, p.GroupScript} {
		if out, err := exec.Command(bash, "-n", "-c", s).CombinedOutput(); err != nil {
			t.Errorf("bash -n: %v %s", err, out)
		}
	}
	if _, err := os.Stat(filepath.Join(out, SlurmDir)); err == nil {
		t.Error("planning wrote the slurm folder")
	}

	// A stand-in sbatch: records its arguments, answers job ids 41 and 42.
	bin := t.TempDir()
	log := filepath.Join(bin, "calls")
	fake := "#!" + bash + "\necho \"$@\" >> " + sq(log) + "\nif [ -e " + sq(filepath.Join(bin, "n")) + " ]; then echo 42; else : > " + sq(filepath.Join(bin, "n")) + "; echo 41; fi\n"
	if err := os.WriteFile(filepath.Join(bin, "sbatch"), []byte(fake), 0o755); err != nil {
		t.Fatal(err)
	}
	t.Setenv("PATH", bin)
	res, err := SubmitSlurm(opt, p)
	if err != nil {
		t.Fatal(err)
	}
	calls, _ := os.ReadFile(log)
	if res.ArrayJob != "41" || res.GroupJob != "42" || !strings.Contains(string(calls), "--parsable --dependency=afterok:41 "+filepath.Join(p.Dir, "group.sh")) {
		t.Errorf("jobs %s %s, sbatch calls:\n%s", res.ArrayJob, res.GroupJob, calls)
	}
	st, err := ReadSlurmState(out)
	if err != nil || len(st.Submissions) != 1 || st.Submissions[0].ArrayJob != "41" || st.Submissions[0].Dir != "submit-001" {
		t.Fatalf("state %+v %v", st, err)
	}
	rep, err := SlurmStatus(out)
	if err != nil {
		t.Fatal(err)
	}
	if rep.Counts["done"] != 1 || rep.Counts["failed"] != 2 || !strings.Contains(rep.Subjects[0].Reason, "never started") {
		t.Errorf("status %+v", rep)
	}

	// sbatch refusing: its message verbatim on one line, no submission folder left.
	refuse := "#!" + bash + "\necho 'sbatch: error: Batch job submission failed: Invalid account' >&2\necho 'sbatch: error: second line' >&2\nexit 1\n"
	os.WriteFile(filepath.Join(bin, "sbatch"), []byte(refuse), 0o755)
	p2, err := PlanSlurm(opt, so)
	if err != nil {
		t.Fatal(err)
	}
	_, err = SubmitSlurm(opt, p2)
	if err == nil || strings.Contains(err.Error(), "\n") || !strings.Contains(err.Error(), "sbatch: error: Batch job submission failed: Invalid account; sbatch: error: second line") {
		t.Errorf("refusal: %v", err)
	}
	if _, e := os.Stat(p2.Dir); e == nil {
		t.Errorf("a refused submission left %s", p2.Dir)
	}
	os.Remove(filepath.Join(bin, "sbatch"))
	if _, err = SubmitSlurm(opt, p2); err == nil || !strings.Contains(err.Error(), "sbatch not found on PATH") {
		t.Errorf("missing sbatch: %v", err)
	}
}

// TestSlurmScriptsQuoteEveryValue runs the generated scripts in bash with values holding
// every shell character — the BIDS folder, the helper's path, the analysis flags, the norm
// folder and group — and a stand-in helper that records the arguments it receives: each
// comes back exactly as given, and no command substitution inside them ran.
func TestSlurmScriptsQuoteEveryValue(t *testing.T) {
	bash, err := exec.LookPath("bash")
	if err != nil {
		t.Skip("no bash")
	}
	const evil = ` a b'c"d$(touch PWNED)` + "`touch PWNED`" + `;|&<>*?~ $HOME \ `
	bids := filepath.Join(t.TempDir(), "bids"+evil)
	if err := os.Rename(phantomCohort(t, 2), bids); err != nil {
		t.Fatal(err)
	}
	out := filepath.Join(t.TempDir(), "deriv")
	cfg := pipeline.Defaults()
	opt := Options{BIDS: bids, Out: out, Config: cfg, Task: "rest"}
	so := goodSlurm(t)
	stubDir := filepath.Join(t.TempDir(), "stub"+evil)
	os.Mkdir(stubDir, 0o755)
	so.Helper = filepath.Join(stubDir, "hubscope-helper")
	argv := filepath.Join(t.TempDir(), "argv")
	// The stand-in helper writes each call's arguments NUL-separated, a newline after each call.
	stub := "#!" + bash + "\nfor a in \"$@\"; do printf '%s\\0' \"$a\"; done >> " + sq(argv) + "\necho >> " + sq(argv) + "\n"
	if err := os.WriteFile(so.Helper, []byte(stub), 0o755); err != nil {
		t.Fatal(err)
	}
	so.Args = []string{"--backend=cpu", "--mask=" + evil, "--atlas-names=" + evil + "\nsecond line"}
	so.NormOut, so.NormGroup = "norm"+evil, "group"+evil
	so.PerTask = 2 // one array task for both subjects
	p, err := PlanSlurm(opt, so)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.MkdirAll(p.Dir, 0o755); err != nil {
		t.Fatal(err)
	}
	os.WriteFile(filepath.Join(p.Dir, "token"), []byte(p.token), 0o644)
	cwd := t.TempDir() // where a substitution that ran would leave PWNED
	for _, s := range []struct{ name, script string }{{"array", p.ArrayScript}, {"group", p.GroupScript}} {
		cmd := exec.Command(bash, "-c", s.script)
		cmd.Dir = cwd
		cmd.Env = append(os.Environ(), "SLURM_ARRAY_TASK_ID=0", "SLURM_ARRAY_JOB_ID=7")
		if b, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("%s script: %v\n%s", s.name, err, b)
		}
	}
	b, err := os.ReadFile(argv)
	if err != nil {
		t.Fatal(err)
	}
	var calls [][]string
	for _, l := range strings.Split(strings.TrimSuffix(string(b), "\x00\n"), "\x00\n") {
		calls = append(calls, strings.Split(l, "\x00"))
	}
	common := append([]string{"cohort", bids, "--out", out, "--task", "rest"}, so.Args...)
	want := [][]string{
		append(slices.Clone(common), "--jobs", "1", "--subject", "01"),
		append(slices.Clone(common), "--jobs", "1", "--subject", "02"),
		append(slices.Clone(common), "--table-only"),
		{"norm", "build", out, "--out", so.NormOut, "--group", so.NormGroup},
	}
	if len(calls) != len(want) {
		t.Fatalf("%d helper calls, want %d: %q", len(calls), len(want), calls)
	}
	for i := range want {
		if !slices.Equal(calls[i], want[i]) {
			t.Errorf("call %d: %q\nwant %q", i, calls[i], want[i])
		}
	}
	if _, err := os.Stat(filepath.Join(cwd, "PWNED")); err == nil {
		t.Error("a command substitution inside a value ran")
	}
}
