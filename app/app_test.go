package app

import (
	"testing"

	"fyne.io/fyne/v2"
	"fyne.io/fyne/v2/storage"
	"fyne.io/fyne/v2/test"
)

func TestDropAcceptsNIfTIOnly(t *testing.T) {
	test.NewTempApp(t)
	u := New()
	w := test.NewTempWindow(t, u.Content())
	w.Resize(fyne.NewSize(600, 400))
	u.Dropped(fyne.NewPos(10, 10), []fyne.URI{
		storage.NewFileURI("/data/sub-01_bold.nii.gz"),
		storage.NewFileURI("/data/notes.txt"),
		storage.NewFileURI("/data/sub-02_bold.nii"),
		storage.NewFileURI("/data/sub-01_bold.nii.gz"), // dropped twice: listed once
	})
	got := u.Scans.Paths()
	if len(got) != 2 || got[0] != "/data/sub-01_bold.nii.gz" || got[1] != "/data/sub-02_bold.nii" {
		t.Fatalf("scans %v", got)
	}
	if s := u.status.Text; s != "2 scan(s) ready. Not a NIfTI scan (.nii, .nii.gz): notes.txt" {
		t.Fatalf("status %q", s)
	}
	if n := u.list.Length(); n != 2 {
		t.Fatalf("list shows %d rows", n)
	}
}

func TestIsScan(t *testing.T) {
	for name, want := range map[string]bool{"a.nii": true, "A.NII.GZ": true, "a.nii.gz.part": false, "a.img": false, "nii": false} {
		if IsScan(name) != want {
			t.Errorf("IsScan(%q) != %v", name, want)
		}
	}
}
