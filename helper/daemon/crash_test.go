package daemon

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/hubscope/hubscope/helper/bundle"
	"github.com/hubscope/hubscope/ipc"
)

// childEnv asks the test binary to act as a helper process (see childMain).
const childEnv = "HUBSCOPE_DAEMON_TEST_CHILD"

// childMain runs when the test binary is re-executed as a helper: it opens a daemon on the
// results directory, submits the scan, prints the job's ID once the job runs, and waits to be
// killed. It reports whether it was the child.
func childMain() bool {
	arg := os.Getenv(childEnv)
	if arg == "" {
		return false
	}
	parts := strings.Split(arg, "\n")
	d, err := New(Options{ResultsDir: parts[0], Backend: "cpu"})
	if err != nil {
		fmt.Println("error:", err)
		os.Exit(1)
	}
	job, err := d.Submit(unix, ipc.JobRequest{Scan: parts[1], Mask: parts[2]})
	if err != nil {
		fmt.Println("error:", err)
		os.Exit(1)
	}
	ch, _ := d.Events(context.Background(), job.ID)
	for ev := range ch {
		if ev.Job.State == ipc.JobRunning && ev.Job.Stage != "" && ev.Job.Stage != "load" {
			fmt.Println(job.ID)
			break
		}
	}
	select {}
}

// TestKilledHelperLeavesInterruptedJob kills a helper process (SIGKILL: no cleanup at all)
// while its job computes the network, then opens the results directory again: the job is
// listed as interrupted with the message, and nothing in it looks like a complete bundle.
func TestKilledHelperLeavesInterruptedJob(t *testing.T) {
	scanPath, maskPath := phantom(t, 6)
	results := filepath.Join(t.TempDir(), "results")
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), childEnv+"="+results+"\n"+scanPath+"\n"+maskPath)
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	line, err := bufio.NewReader(out).ReadString('\n')
	id := strings.TrimSpace(line)
	if err != nil || !idPattern.MatchString(id) {
		cmd.Process.Kill()
		cmd.Wait()
		t.Fatalf("helper process said %q (%v)", line, err)
	}
	cmd.Process.Kill()
	cmd.Wait()

	b, err := os.ReadFile(filepath.Join(results, id, "job.json"))
	if err != nil {
		t.Fatal(err)
	}
	var before record
	if err := json.Unmarshal(b, &before); err != nil || before.State != ipc.JobRunning {
		t.Fatalf("job.json of the killed helper: state %q (%v), want running", before.State, err)
	}

	d := newDaemon(t, results)
	jobs, err := d.Jobs(unix)
	if err != nil {
		t.Fatal(err)
	}
	if len(jobs) != 1 || jobs[0].ID != id || jobs[0].State != ipc.JobInterrupted || jobs[0].Error != interruptedMessage {
		t.Fatalf("after the crash: %+v", jobs)
	}
	if _, err := d.Summary(unix, id); !ipc.IsCode(err, ipc.CodeConflict) {
		t.Fatalf("summary of an interrupted job: %v, want a conflict", err)
	}
	filepath.WalkDir(results, func(p string, e fs.DirEntry, err error) error {
		if err == nil && (e.Name() == bundle.Marker || strings.Contains(e.Name(), ".partial-") || e.Name() == "bundle") {
			t.Errorf("after the crash %s remains", p)
		}
		return nil
	})
}
