//go:build !js

package app

import (
	"bytes"
	"context"
	"io"
	"strings"
	"testing"

	"fyne.io/fyne/v2"
	"fyne.io/fyne/v2/test"

	"github.com/hubscope/hubscope/app/quality"
	"github.com/hubscope/hubscope/ipc"
)

// cleanedHelper is the scripted helper whose job was cleaned: its bundle has qc/denoise.json.
type cleanedHelper struct{ *helper }

const movingQC = `{"strategy":"simple","tr_seconds":2,"volumes_in":200,"volumes_kept":200,"dropped_volumes":0,"censored_volumes":[],
"variance_removed":0.3,"framewise_displacement":[null,0.9,0.8]}`

func (h cleanedHelper) OpenFile(ctx context.Context, id, name string) (io.ReadCloser, ipc.FileInfo, error) {
	if name == quality.DenoiseFile {
		return io.NopCloser(bytes.NewReader([]byte(movingQC))), ipc.FileInfo{Name: name, Size: int64(len(movingQC))}, nil
	}
	return h.helper.OpenFile(ctx, id, name)
}

// A result whose bundle has a cleaning report gets a Quality tab that warns about the motion;
// one without (TestAnalyseOverSocket's) has none.
func TestQualityTabForCleanedJob(t *testing.T) {
	test.NewTempApp(t)
	h := cleanedHelper{newHelper()}
	h.jobs["job1"] = ipc.Job{ID: "job1", Name: "sub-01.nii.gz", State: ipc.JobDone}
	s, err := h.Summary(context.Background(), "job1")
	if err != nil {
		t.Fatal(err)
	}
	// Widgets are built and read on the UI goroutine, as in the app: a goroutine an earlier
	// test left following its job also measures text there, through Fyne's shared font cache.
	var plain, r *Result
	fyne.DoAndWait(func() { plain, err = newResult(context.Background(), h, s, nil) })
	if err != nil {
		t.Fatal(err)
	}
	var selected bool
	fyne.DoAndWait(func() { selected = plain.SelectTab(TabQuality) })
	if plain.Quality != nil || selected {
		t.Error("a Quality tab for a job that was not cleaned")
	}
	fyne.DoAndWait(plain.close)
	s.Files = append(s.Files, ipc.FileInfo{Name: quality.DenoiseFile})
	r = openShown(t, h, s, 900, 700)
	defer fyne.DoAndWait(r.close)
	<-r.SlicesReady
	if r.Quality == nil {
		t.Fatal("no Quality tab")
	}
	<-r.Quality.Loaded() // its figures arrive on a goroutine of their own
	fyne.DoAndWait(func() { selected = r.SelectTab(TabQuality) })
	if !selected {
		t.Fatal("the Quality tab cannot be selected")
	}
	var shown bool
	var text string
	fyne.DoAndWait(func() { shown, text = r.Quality.Warning.Visible(), r.Quality.Warning.Text })
	if !shown || !strings.Contains(text, "Mean head motion 0.85 mm") {
		t.Errorf("warning shown %v: %q", shown, text)
	}
}
