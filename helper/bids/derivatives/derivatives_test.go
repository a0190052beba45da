package derivatives

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func touch(t *testing.T, p string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(p, nil, 0o644); err != nil {
		t.Fatal(err)
	}
}

func TestFindAndNames(t *testing.T) {
	root := t.TempDir()
	touch(t, filepath.Join(root, "sub-02", "func", "sub-02_task-rest_bold.nii.gz"))
	touch(t, filepath.Join(root, "sub-01", "ses-a", "func", "sub-01_ses-a_task-rest_run-1_bold.nii"))
	touch(t, filepath.Join(root, "sub-01", "ses-a", "func", "sub-01_ses-a_task-rest_run-1_events.tsv"))
	touch(t, filepath.Join(root, "sub-03", "func", "sub-03_task-motor_bold.nii.gz"))
	runs, err := Find(root, "rest")
	if err != nil {
		t.Fatal(err)
	}
	if len(runs) != 2 || runs[0].ID() != "sub-01_ses-a_task-rest_run-1" || runs[1].ID() != "sub-02_task-rest" {
		t.Fatalf("runs %+v", runs)
	}
	if d := runs[0].Dir(); d != filepath.Join("sub-01", "ses-a", "func") {
		t.Errorf("dir %s", d)
	}
	if n, _ := runs[1].Name("hubscope", "degree", ".nii.gz"); n != "sub-02_task-rest_desc-hubscope_degree.nii.gz" {
		t.Errorf("name %s", n)
	}
	for _, bad := range []string{"a-b", "x/y", "$(rm)", "a b", "", "..", "é"} {
		if ValidLabel("subject", bad) == nil {
			t.Errorf("label %q accepted", bad)
		}
		if _, err := runs[0].Name(bad, "degree", ".nii.gz"); bad != "" && err == nil {
			t.Errorf("desc %q accepted", bad)
		}
	}
	evil := t.TempDir()
	touch(t, filepath.Join(evil, "sub-a;b", "func", "sub-a;b_task-rest_bold.nii.gz"))
	if _, err := Find(evil, ""); err == nil || !strings.Contains(err.Error(), "only letters and digits") {
		t.Errorf("bad subject folder: %v", err)
	}
	mixed := t.TempDir()
	touch(t, filepath.Join(mixed, "sub-01", "func", "sub-02_task-rest_bold.nii.gz"))
	if _, err := Find(mixed, ""); err == nil {
		t.Error("a file of sub-02 in sub-01's folder was accepted")
	}
}

func TestParticipants(t *testing.T) {
	root := t.TempDir()
	os.WriteFile(filepath.Join(root, "participants.tsv"), []byte("participant_id\tdiagnosis\tage\nsub-01\tcontrol\t30\nsub-02\tpatient\t41\n"), 0o644)
	p, err := ReadParticipants(root)
	if err != nil {
		t.Fatal(err)
	}
	if !p.Has("diagnosis") || p.Has("sex") || p.Rows["sub-02"]["age"] != "41" || len(p.Order) != 2 {
		t.Errorf("%+v", p)
	}
	os.WriteFile(filepath.Join(root, "participants.tsv"), []byte("participant_id\tdiagnosis\nsub-01\n"), 0o644)
	if _, err := ReadParticipants(root); err == nil || !strings.Contains(err.Error(), "line 2") {
		t.Errorf("short row: %v", err)
	}
	// dataset_description.json byte for byte as it was written before its type moved to
	// ipc/schema (from a map, so with sorted keys), with and without a source dataset.
	for _, c := range []struct{ version, source, want string }{
		{"1.0", "/data/bids", `{
  "BIDSVersion": "1.8.0",
  "DatasetType": "derivative",
  "GeneratedBy": [
    {
      "Name": "HubScope",
      "Version": "1.0"
    }
  ],
  "Name": "HubScope derivatives",
  "SourceDatasets": [
    {
      "URL": "file:///data/bids"
    }
  ]
}
`},
		{"0.1.0", "", `{
  "BIDSVersion": "1.8.0",
  "DatasetType": "derivative",
  "GeneratedBy": [
    {
      "Name": "HubScope",
      "Version": "0.1.0"
    }
  ],
  "Name": "HubScope derivatives"
}
`},
	} {
		if err := WriteDescription(root, "HubScope", c.version, c.source); err != nil {
			t.Fatal(err)
		}
		b, _ := os.ReadFile(filepath.Join(root, "dataset_description.json"))
		if string(b) != c.want {
			t.Errorf("source %q:\n%s\nwant:\n%s", c.source, b, c.want)
		}
	}
}
