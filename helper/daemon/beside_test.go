package daemon

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/hubscope/hubscope/helper/progress"
	"github.com/hubscope/hubscope/ipc"
)

// A running job's progress names the stages running beside its main one (progress.Lane: the
// random networks beside the modules), each with its own count; a stage that ended is gone,
// the terminal state carries none, and a job without them writes no "beside" key, so clients
// that predate it read the same JSON as before.
func TestProgressBeside(t *testing.T) {
	d := &Daemon{}
	j := newJob(record{Job: ipc.Job{ID: "j", State: ipc.JobRunning}}, t.TempDir())
	j.tracker = progress.NewTracker()
	j.tracker.Start("modules", 0)
	lane, end := progress.Lane(j.tracker)
	lane.Start("random networks", 15)
	lane.Add(6)
	d.publishLocked(j, "")
	b := j.rec.Beside
	if j.rec.Stage != "modules" || len(b) != 1 || b[0].Stage != "random networks" || b[0].Done != 6 || b[0].Total != 15 || b[0].Fraction != 0.4 {
		t.Fatalf("stage %q, beside %+v", j.rec.Stage, b)
	}
	js, _ := json.Marshal(j.rec.Job)
	if !strings.Contains(string(js), `"beside":[{"stage":"random networks","fraction":0.4,"done":6,"total":15`) {
		t.Errorf("job JSON: %s", js)
	}
	// An older client's Job (no Beside) reads it as before.
	var old struct {
		Stage    string  `json:"stage"`
		Fraction float64 `json:"fraction"`
	}
	if err := json.Unmarshal(js, &old); err != nil || old.Stage != "modules" {
		t.Errorf("an older client's decode: %+v %v", old, err)
	}
	end(nil)
	d.publishLocked(j, "")
	if j.rec.Beside != nil {
		t.Errorf("after the lane ended: %+v", j.rec.Beside)
	}
	js, _ = json.Marshal(j.rec.Job)
	if strings.Contains(string(js), "beside") {
		t.Errorf("a job with nothing beside writes %s", js)
	}
	// With no main stage, the lanes are all beside.
	j.tracker = progress.NewTracker()
	lane, _ = progress.Lane(j.tracker)
	lane.Start("global measures", 0)
	d.publishLocked(j, "")
	if len(j.rec.Beside) != 1 || j.rec.Beside[0].Stage != "global measures" {
		t.Errorf("no main stage: beside %+v", j.rec.Beside)
	}
	j.rec.State = ipc.JobDone
	d.publishLocked(j, "")
	if j.rec.Beside != nil {
		t.Errorf("a finished job: beside %+v", j.rec.Beside)
	}
}
