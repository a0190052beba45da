package daemon

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/hubscope/hubscope/ipc"
	"github.com/hubscope/hubscope/ipc/settings"
)

// The browser build gives a confounds table as an upload beside the scan: a .tsv with a
// tab-separated header is taken, anything else refused by name; the submitted job's settings
// name the table in its input/, and a confounds path in the settings is refused over the web
// (it would name a file on the helper's disk). A table cannot stand in for a scan or a mask,
// nor a scan for a table.
func TestConfoundsUpload(t *testing.T) {
	d := newDaemon(t, filepath.Join(t.TempDir(), "results"))
	web := ipc.ContextWithTransport(context.Background(), ipc.TransportWeb)
	scanPath, _ := phantom(t, 12)
	scan, err := os.ReadFile(scanPath)
	if err != nil {
		t.Fatal(err)
	}
	table := "trans_x\ttrans_y\ttrans_z\n" + strings.Repeat("0.1\t0.2\t0.3\n", 10)
	for _, c := range []struct{ name, body, want string }{
		{"confounds.tsv", "a,b,c\n1,2,3\n", "not a tab-separated confounds table"},
		{"confounds.tsv", "a\tb\n\x00\x01", "not a tab-separated confounds table"},
		{"confounds.csv", table, "not a NIfTI file name"},
	} {
		if _, err := d.Upload(web, c.name, strings.NewReader(c.body)); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("upload %s %q: %v, want %q", c.name, c.body[:5], err, c.want)
		}
	}
	upload := func(name string, b []byte) string {
		t.Helper()
		up, err := d.Upload(web, name, bytes.NewReader(b))
		if err != nil {
			t.Fatal(err)
		}
		return up.ID
	}
	// A table offered as a scan, a scan offered as the table.
	if _, err := d.Submit(web, ipc.JobRequest{ScanUpload: upload("c.tsv", []byte(table))}); !ipc.IsCode(err, ipc.CodeBadRequest) {
		t.Errorf("a table as the scan: %v", err)
	}
	if _, err := d.Submit(web, ipc.JobRequest{ScanUpload: upload("s.nii.gz", scan), ConfoundsUpload: upload("s2.nii.gz", scan)}); !ipc.IsCode(err, ipc.CodeBadRequest) {
		t.Errorf("a scan as the table: %v", err)
	}
	set := settings.Defaults()
	set.Metrics, set.Confounds = settings.MetricsNone, "/etc/hostname"
	if _, err := d.Submit(web, ipc.JobRequest{ScanUpload: upload("s.nii.gz", scan), Settings: &set}); !ipc.IsCode(err, ipc.CodeForbidden) || !strings.Contains(err.Error(), "confounds_upload") {
		t.Errorf("a confounds path over the web: %v", err)
	}
	set.Confounds = ""
	job, err := d.Submit(web, ipc.JobRequest{ScanUpload: upload("s.nii.gz", scan), ConfoundsUpload: upload("c.tsv", []byte(table)), Settings: &set})
	if err != nil {
		t.Fatal(err)
	}
	want := filepath.Join(d.jobDir(job.ID), "input", "confounds.tsv")
	if job.Settings.Confounds != want {
		t.Errorf("the job's confounds: %q, want %q", job.Settings.Confounds, want)
	}
	if b, err := os.ReadFile(want); err != nil || string(b) != table {
		t.Errorf("the job's table: %v, %d bytes", err, len(b))
	}
	d.Cancel(web, job.ID)
}
