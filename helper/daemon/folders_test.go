package daemon

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/hubscope/hubscope/ipc"
	"github.com/hubscope/hubscope/ipc/schema"
)

// TestFolders: the result folders a client without paths (the browser) may open are the jobs'
// own bundles and the bundles, group bundles and comparisons under the open root; a
// comparison whose reference bundle lies elsewhere, a symbolic link out of the root and a
// hidden folder are not listed; a cohort folder is, and its tables are read by its ID. Each listed folder opens by its ID over the web transport;
// an ID not listed (a path of the client's own making) is not found.
func TestFolders(t *testing.T) {
	scanPath, maskPath := phantom(t, 12)
	root := t.TempDir()
	d, err := New(Options{ResultsDir: filepath.Join(t.TempDir(), "results"), Backend: "cpu", OpenRoot: root})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { d.Close(context.Background()) })
	job, err := d.Submit(unix, ipc.JobRequest{Scan: scanPath, Mask: maskPath, Settings: settingsOf(`{"metrics": "none", "denoise": "none"}`)})
	if err != nil {
		t.Fatal(err)
	}
	if evs := follow(t, d, job.ID); evs[len(evs)-1].Job.State != ipc.JobDone {
		t.Fatalf("job: %s", evs[len(evs)-1].Job.Error)
	}
	sum, err := d.Summary(unix, job.ID)
	if err != nil {
		t.Fatal(err)
	}
	put := func(rel string) string {
		t.Helper()
		dir := filepath.Join(root, filepath.FromSlash(rel))
		if err := os.MkdirAll(filepath.Dir(dir), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.CopyFS(dir, os.DirFS(sum.Bundle)); err != nil {
			t.Fatal(err)
		}
		return dir
	}
	run := put("deriv/sub-01/func/sub-01_task-rest_hubscope")
	grp := put("deriv/group/task-rest_desc-groupmean_hubscope")
	put(".trash/old_hubscope")
	g, _ := json.Marshal(schema.Group{Mean: "fisher-z", MaskRule: "intersect", Subjects: []schema.GroupSubject{{Label: "a"}, {Label: "b"}}})
	os.WriteFile(filepath.Join(grp, schema.GroupFile), g, 0o644)
	compare := func(rel, ref string) {
		dir := filepath.Join(root, rel)
		os.MkdirAll(dir, 0o755)
		c, _ := json.Marshal(schema.Comparison{GroupColumn: "diagnosis", Groups: [2]string{"patient", "control"}, Maps: []string{"degree"}, ReferenceBundle: ref})
		os.WriteFile(filepath.Join(dir, schema.ComparisonFile), c, 0o644)
	}
	compare("deriv/compare", run)
	measures := "participant_id\trun\tdiagnosis\tnetwork.edges\nsub-01\tsub-01_task-rest\tcontrol\t120\n"
	os.WriteFile(filepath.Join(root, "deriv", "measures.tsv"), []byte(measures), 0o644)
	os.WriteFile(filepath.Join(root, "deriv", "compare", "compare_global.tsv"), []byte("measure\tt\nnetwork.edges\t2.5\n"), 0o644)
	compare("elsewhere", sum.Bundle) // its reference bundle is the job's, outside the root
	if err := os.Symlink(filepath.Dir(sum.Bundle), filepath.Join(root, "link")); err != nil {
		t.Fatal(err)
	}

	web := ipc.ContextWithTransport(context.Background(), ipc.TransportWeb)
	list, err := d.Folders(web)
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]string{}
	for _, f := range list {
		got[f.ID] = f.Kind + " " + f.Name
	}
	want := map[string]string{
		"jobs/" + job.ID: "bundle " + job.Name,
		"folder/deriv/sub-01/func/sub-01_task-rest_hubscope":   "bundle deriv/sub-01/func/sub-01_task-rest_hubscope",
		"folder/deriv/group/task-rest_desc-groupmean_hubscope": "group deriv/group/task-rest_desc-groupmean_hubscope",
		"folder/deriv/compare":                                 "comparison deriv/compare",
		"folder/deriv":                                         "cohort deriv",
	}
	if len(got) != len(want) {
		t.Errorf("listed %v, want %v", got, want)
	}
	for id, w := range want {
		if got[id] != w {
			t.Errorf("%s: listed as %q, want %q", id, got[id], w)
		}
	}

	// Each opens by its ID over the web transport.
	gj, err := d.Submit(web, ipc.JobRequest{OpenFolder: "folder/deriv/group/task-rest_desc-groupmean_hubscope"})
	if err != nil {
		t.Fatal(err)
	}
	if gs, err := d.Summary(web, gj.ID); err != nil || gs.Group == nil || gs.Bundle != grp || gj.State != ipc.JobDone {
		t.Errorf("group folder opened: %+v, %v", gj, err)
	}
	if same, err := d.Submit(web, ipc.JobRequest{OpenFolder: "jobs/" + job.ID}); err != nil || same.ID != job.ID {
		t.Errorf("a job's own bundle opened as %+v, %v; want the job itself", same, err)
	}
	cj, err := d.Submit(web, ipc.JobRequest{OpenFolder: "folder/deriv/compare"})
	if err != nil {
		t.Fatal(err)
	}
	if cs, err := d.Summary(web, cj.ID); err != nil || cs.Comparison == nil || cs.Bundle != run || !slices.Contains(cs.Volumes, "degree") {
		t.Errorf("comparison opened: %v %v", cs.Comparison, err)
	}
	for _, f := range list {
		if f.ID == "folder/deriv" && strings.Join(f.Tables, ",") != "measures.tsv,compare_global.tsv" {
			t.Errorf("the cohort folder's tables are listed as %v", f.Tables)
		}
	}
	// A cohort folder's tables, by its ID: in the folder, or in its compare/.
	if b, err := d.FolderTable(web, "folder/deriv", "measures.tsv"); err != nil || string(b) != measures {
		t.Errorf("measures.tsv: %q %v", b, err)
	}
	if b, err := d.FolderTable(web, "folder/deriv", "compare_global.tsv"); err != nil || !strings.HasPrefix(string(b), "measure\tt\n") {
		t.Errorf("compare/compare_global.tsv: %q %v", b, err)
	}
	for _, c := range []struct{ id, name, code string }{
		{"folder/deriv", "compare_nodes.tsv", ipc.CodeNotFound},
		{"folder/deriv", "../../etc/passwd", ipc.CodeBadRequest},
		{"folder/deriv", "cohort_complete.json", ipc.CodeBadRequest},
		{"folder/deriv/compare", "measures.tsv", ipc.CodeNotFound},
		{"folder/elsewhere", "measures.tsv", ipc.CodeNotFound},
	} {
		if _, err := d.FolderTable(web, c.id, c.name); !ipc.IsCode(err, c.code) {
			t.Errorf("table %s of %s: %v, want %s", c.name, c.id, err, c.code)
		}
	}
	for _, c := range []struct {
		req  ipc.JobRequest
		code string
	}{
		{ipc.JobRequest{OpenFolder: "folder/deriv"}, ipc.CodeBadRequest},
		{ipc.JobRequest{OpenFolder: "folder/elsewhere"}, ipc.CodeNotFound},
		{ipc.JobRequest{OpenFolder: "folder/link/bundle"}, ipc.CodeNotFound},
		{ipc.JobRequest{OpenFolder: "folder/.trash/old_hubscope"}, ipc.CodeNotFound},
		{ipc.JobRequest{OpenFolder: "folder/../" + filepath.Base(root) + "/deriv/compare"}, ipc.CodeNotFound},
		{ipc.JobRequest{OpenFolder: sum.Bundle}, ipc.CodeNotFound},
		{ipc.JobRequest{OpenFolder: "folder/deriv/compare", Scan: scanPath}, ipc.CodeBadRequest},
		{ipc.JobRequest{Open: grp}, ipc.CodeForbidden},
	} {
		if _, err := d.Submit(web, c.req); !ipc.IsCode(err, c.code) {
			t.Errorf("%+v: %v, want %s", c.req, err, c.code)
		}
	}
	// A root that is not a folder is refused at the start, naming it.
	if _, err := New(Options{ResultsDir: filepath.Join(t.TempDir(), "r2"), Backend: "cpu", OpenRoot: scanPath}); err == nil || !strings.Contains(err.Error(), "not a folder") {
		t.Errorf("open root that is a file: %v", err)
	}
}
