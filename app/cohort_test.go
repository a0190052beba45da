//go:build !js

package app

import (
	"context"
	"math"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"fyne.io/fyne/v2"
	"fyne.io/fyne/v2/test"

	"github.com/hubscope/hubscope/app/compareview"
	"github.com/hubscope/hubscope/app/slices/slicestest"
	"github.com/hubscope/hubscope/ipc"
	"github.com/hubscope/hubscope/ipc/schema"
)

// folderHelper opens folders as the helper does (JobRequest.Open): a folder named "compare"
// as a two-group comparison on the phantom's grid (t = the hub score, q 0.01 where it is
// above 2, else 0.5), any other as a group-mean network of two subjects.
type folderHelper struct {
	*phantomHelper
	mu     sync.Mutex
	opened []string
}

func (h *folderHelper) Submit(ctx context.Context, req ipc.JobRequest) (ipc.Job, error) {
	if req.Open == "" {
		return h.phantomHelper.Submit(ctx, req)
	}
	h.mu.Lock()
	h.opened = append(h.opened, req.Open)
	h.mu.Unlock()
	return ipc.Job{ID: slicestest.JobID, Name: filepath.Base(req.Open), State: ipc.JobDone}, nil
}

func (h *folderHelper) last() string {
	h.mu.Lock()
	defer h.mu.Unlock()
	if len(h.opened) == 0 {
		return ""
	}
	return h.opened[len(h.opened)-1]
}

func (h *folderHelper) Summary(ctx context.Context, id string) (ipc.Summary, error) {
	s, err := h.phantomHelper.Summary(ctx, id)
	switch last := h.last(); {
	case filepath.Base(last) == "compare":
		s.Volumes = append(s.Volumes, "t_degree", "q_degree")
		s.Comparison = &schema.Comparison{GroupColumn: "diagnosis", Groups: [2]string{"patient", "control"}, N: [2]int{4, 4},
			Alpha: 0.05, Maps: []string{"degree"}}
	case last != "":
		s.Group = &schema.Group{Mean: "fisher-z", MaskRule: "intersect", Nodes: 5000, Volumes: 40,
			Subjects: []schema.GroupSubject{{Label: "sub-01"}, {Label: "sub-02"}}}
	}
	return s, err
}

func (h *folderHelper) Volume(ctx context.Context, id, name string) (*ipc.Volume, error) {
	if name != "t_degree" && name != "q_degree" {
		return h.phantomHelper.Volume(ctx, id, name)
	}
	v, err := h.phantomHelper.Volume(ctx, id, "hub_z")
	if err != nil {
		return nil, err
	}
	v.Header.Name = name
	if name == "q_degree" {
		for i, x := range v.Data {
			switch {
			case math.IsNaN(float64(x)):
			case x > 2:
				v.Data[i] = 0.01
			default:
				v.Data[i] = 0.5
			}
		}
		v.Header.Min, v.Header.Max = 0.01, 0.5
	}
	return v, nil
}

// "Open results folder…": a cohort's folder with compare's output shows the subjects' table
// and, opened through the helper, the comparison's t-maps with its significant nodes (the hub
// voxels, whose hub score is above 2); a results bundle (its marker file) is opened through the
// helper as a result, a group-mean network's with its subjects and mask rule in the Network
// tab and the title.
func TestOpenFolder(t *testing.T) {
	test.NewTempApp(t)
	h := &folderHelper{phantomHelper: &phantomHelper{Service: slicestest.NewService()}}
	shown := make(chan error, 4)
	results := make(chan *Result, 4)
	u := New(context.Background(), Options{
		OnComparison: func(_ *compareview.View, err error) { shown <- err },
		OnResult:     func(r *Result) { results <- r },
	})
	test.NewTempWindow(t, u.Content()).Resize(fyne.NewSize(1280, 800))
	fyne.DoAndWait(func() { u.connected(h, ipc.Info{}, nil) })

	cohort := t.TempDir()
	cmp := filepath.Join(cohort, "compare")
	for path, text := range map[string]string{
		filepath.Join(cohort, "measures.tsv"):                                             "participant_id\trun\tdiagnosis\thubs.count\nsub-01\tsub-01_task-rest\tcontrol\t990\n",
		filepath.Join(cmp, "compare_global.tsv"):                                          "measure\tmean_a\tmean_b\tt\tdf\tp\tp_permutation\tq_fdr\nhubs.count\t1\t2\t-3\t6\t0.01\t0.02\t0.02\n",
		filepath.Join(cmp, schema.ComparisonFile):                                         "{}",
		filepath.Join(cohort, "group", bundleMarker):                                      "",
		filepath.Join(cohort, "group", "task-rest_desc-groupmean_hubscope", bundleMarker): "",
	} {
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	fyne.DoAndWait(func() { u.OpenFolder(cohort) })
	if err := <-shown; err != nil {
		t.Fatal(err)
	}
	var tabs []string
	var rows []compareview.Row
	fyne.DoAndWait(func() {
		for _, it := range u.Cohort().Tabs.Items {
			tabs = append(tabs, it.Text)
		}
		rows = u.Comparison().Rows
	})
	if h.last() != cmp || strings.Join(tabs, ",") != "Subjects,Comparison,"+TabTMaps {
		t.Fatalf("opened %q; cohort tabs %v", h.opened, tabs)
	}
	if len(rows) != len(slicestest.Hubs) {
		t.Fatalf("%d significant nodes, want the %d hubs: %+v", len(rows), len(slicestest.Hubs), rows)
	}
	// The T-maps tab takes the window's width: the scan list folds away.
	var listShown bool
	fyne.DoAndWait(func() {
		u.SelectCohortTab(TabTMaps)
		listShown = u.left.Visible()
	})
	if listShown {
		t.Error("the scan list stays beside the T-maps tab")
	}
	// The cohort's group-mean network (cohort's group/ folder) opens from the cohort view.
	var groupButtons []string
	fyne.DoAndWait(func() {
		for _, b := range u.cohortGroups {
			groupButtons = append(groupButtons, b.Text)
		}
	})
	if strings.Join(groupButtons, ",") != "Group mean (rest)" {
		t.Fatalf("group-mean buttons %q", groupButtons)
	}
	test.Tap(u.cohortGroups[0])
	u.submitting.Wait()
	if want := filepath.Join(cohort, "group", "task-rest_desc-groupmean_hubscope"); h.last() != want {
		t.Errorf("the group-mean button opened %q, want %s", h.last(), want)
	}
	if r := <-results; r != nil {
		<-r.SlicesReady
		fyne.DoAndWait(r.close)
	}

	fyne.DoAndWait(func() { u.OpenFolder(filepath.Join(cohort, "group")) })
	r := <-results
	<-r.SlicesReady
	defer fyne.DoAndWait(r.close)
	var lines []string
	var title string
	var cohortShown, comparisonShown bool
	fyne.DoAndWait(func() {
		lines, title = r.Network.GroupLines(), r.Title()
		cohortShown, comparisonShown = u.Cohort() != nil, u.Comparison() != nil
	})
	if cohortShown || comparisonShown || len(lines) < 3 || !strings.HasPrefix(lines[0], "Group-mean network of 2 subjects (40 volumes each): the mean of their Fisher z") ||
		lines[1] != "Mask rule: intersect, 5000 nodes." || lines[2] != "Subjects: sub-01, sub-02." || title != "Group mean of 2 subjects: phantom" {
		t.Fatalf("group result %q: cohort %v, comparison %v, lines %q", title, cohortShown, comparisonShown, lines)
	}
}
