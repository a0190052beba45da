package app

import (
	"encoding/json"
	"strings"
	"testing"

	"fyne.io/fyne/v2"
	"fyne.io/fyne/v2/test"

	"github.com/hubscope/hubscope/ipc/settings"
)

// The threshold sweep reaches the settings when it is written as the helper takes it, and is
// refused in words otherwise or with a threshold mode it cannot replace; the normative folder
// is kept in the preferences and read back by the next form.
func TestSweepAndNormSettings(t *testing.T) {
	test.NewTempApp(t)
	f := NewSettingsForm()
	test.NewTempWindow(t, f.Content())
	for in, want := range map[string]string{"r=0.3:0.6:0.05": "r=0.3:0.6:0.05", " density=0.01, 0.05,0.1 ": "density=0.01,0.05,0.1", "": ""} {
		f.Sweep.SetText(in)
		s, err := f.Settings()
		if err != nil || s.Sweep != want {
			t.Errorf("sweep %q: %q, %v", in, s.Sweep, err)
		}
		// The request decodes as the helper decodes it: a sweep with a threshold is refused.
		b, _ := json.Marshal(&s)
		var back settings.Settings
		if err := json.Unmarshal(b, &back); err != nil || back.Sweep != want {
			t.Errorf("sweep %q as the helper reads it: %+v, %v", in, back.Network, err)
		}
	}
	f.SetSweep("r=0.2,0.3") // hubscope --sweep: in the next request at once
	if s, err := f.Settings(); err != nil || s.Sweep != "r=0.2,0.3" {
		t.Errorf("SetSweep: %q, %v", s.Sweep, err)
	}
	// hubscope --denoise: the preset in the next request; an unknown one is refused by name.
	if err := f.SetCleaning("none"); err != nil {
		t.Fatal(err)
	}
	if s, err := f.Settings(); err != nil || s.Denoise != settings.DenoiseNone {
		t.Errorf("SetCleaning(none): %q, %v", s.Denoise, err)
	}
	if err := f.SetCleaning("gentle"); err == nil || !strings.Contains(err.Error(), "auto, simple, scrubbing, compcor, none") {
		t.Errorf("SetCleaning(gentle): %v", err)
	}
	f.Sweep.SetText("r from 0.3 to 0.6")
	if !strings.Contains(f.Problem.Text, "A threshold sweep is written r=LO:HI:STEP") {
		t.Errorf("bad sweep: %q", f.Problem.Text)
	}
	f.Sweep.SetText("r=0.3:0.6:0.1")
	if !strings.Contains(f.Summary.Text, "thresholds swept over r=0.3:0.6:0.1") {
		t.Errorf("summary %q", f.Summary.Text)
	}
	f.Mode.SetSelected("Significant links (α)")
	if !strings.Contains(f.Problem.Text, "A threshold sweep replaces the threshold") {
		t.Errorf("sweep with α: %q", f.Problem.Text)
	}

	if f.Norm.Path != "" || !f.Norm.Clear.Disabled() {
		t.Fatalf("a fresh app has normative folder %q", f.Norm.Path)
	}
	f.Norm.Set("/data/controls/norm")
	if got := fyne.CurrentApp().Preferences().String(NormPreference); got != "/data/controls/norm" {
		t.Fatalf("preference %q", got)
	}
	g := NewSettingsForm()
	if g.Norm.Path != "/data/controls/norm" || !strings.Contains(g.Norm.Label.Text, "norm (/data/controls)") || g.Norm.Clear.Disabled() {
		t.Fatalf("next form: %q, %q", g.Norm.Path, g.Norm.Label.Text)
	}
	g.Norm.Clear.OnTapped()
	if g.Norm.Path != "" || fyne.CurrentApp().Preferences().String(NormPreference) != "" {
		t.Fatal("clearing kept the folder")
	}
}

// TestNodeSettings: the settings panel's network nodes give the helper's nodes and atlas
// settings; a label image file must be chosen before the file choice is valid.
func TestNodeSettings(t *testing.T) {
	test.NewTempApp(t)
	f := NewSettingsForm()
	test.NewTempWindow(t, f.Content())
	if s, err := f.Settings(); err != nil || s.Nodes != "" || s.Atlas != "" {
		t.Fatalf("default nodes %q, atlas %q, %v", s.Nodes, s.Atlas, err)
	}
	f.Nodes.SetSelected("Atlas regions (AAL)")
	s, err := f.Settings()
	if err != nil || s.Nodes != settings.NodesRegions || s.Atlas != settings.AtlasAAL || s.Validate() != nil {
		t.Fatalf("AAL regions: nodes %q, atlas %q, %v", s.Nodes, s.Atlas, err)
	}
	if !strings.HasSuffix(f.Summary.Text, ", nodes: the AAL atlas's regions.") || !strings.Contains(f.NodesNote.Text, "NiftiLabelsMasker") {
		t.Errorf("summary %q, note %q", f.Summary.Text, f.NodesNote.Text)
	}
	if f.Atlas.Choose.Disabled() != true {
		t.Error("the atlas file button is enabled for the embedded AAL")
	}
	f.Nodes.SetSelected("Atlas regions (label image file)")
	if _, err := f.Settings(); err == nil || !strings.Contains(f.Problem.Text, "Choose the atlas's label image") || f.Atlas.Choose.Disabled() {
		t.Errorf("file without a file: %v, problem %q", err, f.Problem.Text)
	}
	f.Atlas.Set("/data/atlases/schaefer100.nii.gz")
	if s, err := f.Settings(); err != nil || s.Atlas != "/data/atlases/schaefer100.nii.gz" || s.Nodes != settings.NodesRegions || f.Problem.Visible() {
		t.Errorf("file atlas: %q, %v, problem %q", s.Atlas, err, f.Problem.Text)
	}
	if !strings.HasSuffix(f.Summary.Text, ", nodes: the regions of schaefer100.nii.gz.") {
		t.Errorf("summary %q", f.Summary.Text)
	}
	f.Nodes.SetSelected("Voxels")
	if s, err := f.Settings(); err != nil || s.Nodes != "" || s.Atlas != "" {
		t.Errorf("back to voxels: nodes %q, atlas %q, %v", s.Nodes, s.Atlas, err)
	}
}
