//go:build !js

package app

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"fyne.io/fyne/v2"
	"fyne.io/fyne/v2/storage"
	"fyne.io/fyne/v2/test"

	"github.com/hubscope/hubscope/ipc"
)

// dicomHelper is the scripted helper reading DICOM: a functional and a structural series.
type dicomHelper struct {
	*helper
	mu     sync.Mutex
	listed []string
}

func (h *dicomHelper) ListSeries(_ context.Context, req ipc.SeriesRequest) (ipc.DICOMListing, error) {
	h.mu.Lock()
	h.listed = append(h.listed, req.Path)
	h.mu.Unlock()
	return ipc.DICOMListing{
		Series: []ipc.DICOMSeries{
			{Number: 2, Description: "t1_mprage", Modality: "MR", Volumes: 1, Matrix: [3]int{256, 256, 176}},
			{Number: 6, Description: "rest_bold", Modality: "MR", Volumes: 200, TR: 2, Matrix: [3]int{64, 64, 35}, EPI: true, TimeSeries: true},
		},
		Chosen: 6, Reason: "the EPI time series with the most volumes (200)",
	}, nil
}

// Submit records the request like the fake helper's, but the job has already failed: no result
// opens, so nothing of this test keeps building widgets after it ends.
func (h *dicomHelper) Submit(ctx context.Context, req ipc.JobRequest) (ipc.Job, error) {
	j, err := h.helper.Submit(ctx, req)
	if err != nil {
		return j, err
	}
	h.helper.mu.Lock()
	defer h.helper.mu.Unlock()
	j.State, j.Error = ipc.JobFailed, "not analysed in this test"
	h.helper.jobs[j.ID] = j
	return j, nil
}

// TestDropDICOMFolderShowsSeries: a DICOM folder dropped on the window is listed by the helper,
// its row shows the series with the helper's choice selected, another can be chosen, and the
// job is submitted with that series.
func TestDropDICOMFolderShowsSeries(t *testing.T) {
	test.NewTempApp(t)
	h := &dicomHelper{helper: newHelper()}
	connected := make(chan error, 1)
	u := New(context.Background(), Options{
		Connect:   func(context.Context) (ipc.Service, error) { return h, nil },
		OnConnect: func(_ ipc.Info, err error) { connected <- err },
	})
	w := test.NewTempWindow(t, u.Content())
	w.Resize(fyne.NewSize(1000, 700))
	u.Start()
	if err := <-connected; err != nil {
		t.Fatal(err)
	}
	folder := filepath.Join(t.TempDir(), "exam")
	os.Mkdir(folder, 0o755)
	// Everything touching widgets runs on the UI goroutine, as it does in the app (Fyne's test
	// driver applies fyne.Do updates on a goroutine of its own).
	fyne.DoAndWait(func() {
		u.Dropped(fyne.NewPos(5, 5), []fyne.URI{storage.NewFileURI(folder), storage.NewFileURI("/data/notes.txt")})
	})
	u.listing.Wait() // the helper answered and the list was refreshed
	it := u.Scans.Items()
	if len(it) != 1 || it[0].Listing == nil {
		t.Fatalf("no series listing arrived: %+v", it)
	}
	item := it[0]
	if item.Path != folder || item.Series != 6 || len(h.listed) != 1 || h.listed[0] != folder {
		t.Fatalf("pending %+v, listed %v", item, h.listed)
	}
	var status string
	fyne.DoAndWait(func() { status = u.Status.Text })
	if !strings.Contains(status, "Not a NIfTI scan (.nii, .nii.gz) or DICOM (folder, .zip, DICOMDIR): notes.txt") {
		t.Errorf("status %q", status)
	}
	var row *pendingRow
	var visible bool
	var options []string
	var selected string
	fyne.DoAndWait(func() {
		row = newPendingRow(u)
		row.show(item)
		visible, options, selected = row.series.Visible(), row.series.Options, row.series.Selected
	})
	if !visible || len(options) != 2 || selected != "6 rest_bold — 200 volume(s), TR 2 s, 64×64×35" {
		t.Fatalf("series chooser: visible %v, options %q, selected %q", visible, options, selected)
	}
	fyne.DoAndWait(func() { row.series.SetSelected(options[0]) }) // the user picks series 2
	if it := u.Scans.Items(); it[0].Series != 2 {
		t.Fatalf("chosen series %d, want 2", it[0].Series)
	}
	fyne.DoAndWait(u.analysePending)
	// The submission and the job's events run on goroutines of their own; Fyne's test driver
	// runs their fyne.Do updates inline, so the test ends only once they have (a later test
	// building widgets would otherwise share Fyne's caches with them).
	defer func() { u.submitting.Wait(); u.Jobs.Wait() }()
	for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(10 * time.Millisecond) {
		h.mu.Lock()
		h.helper.mu.Lock()
		sub := h.submitted
		h.helper.mu.Unlock()
		h.mu.Unlock()
		if len(sub) == 1 {
			if sub[0].Scan != folder || sub[0].Settings.DICOMSeries != 2 {
				t.Fatalf("submitted %+v", sub[0])
			}
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("nothing submitted")
		}
	}
	// A NIfTI row keeps no chooser.
	fyne.DoAndWait(func() {
		row.show(Pending{Path: "/data/sub-01.nii.gz"})
		visible = row.series.Visible()
	})
	if visible {
		t.Error("series chooser shown for a NIfTI scan")
	}
	if !IsDICOM(folder) || !IsDICOM("/x/exam.ZIP") || !IsDICOM("/cd/DICOMDIR") || IsDICOM("/x/a.nii.gz") {
		t.Error("IsDICOM")
	}
}
