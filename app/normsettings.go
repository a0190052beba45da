package app

import (
	"fmt"
	"path/filepath"
	"regexp"
	"strings"

	"fyne.io/fyne/v2"
	"fyne.io/fyne/v2/container"
	"fyne.io/fyne/v2/dialog"
	"fyne.io/fyne/v2/storage"
	"fyne.io/fyne/v2/theme"
	"fyne.io/fyne/v2/widget"
)

// NormPreference is the preferences key that keeps the normative folder between sessions: a
// clinician chooses the cohort once, and every scan analysed afterwards is compared with it.
const NormPreference = "norm_folder"

// NormChoice is the settings' normative folder (built by "hubscope-helper norm build"): every
// job submitted while one is chosen is run with it (the helper's --norm), and its result shows
// the Norm tab. The folder must hold norm.json; the helper checks that the cohort was analysed
// with the same settings and names any difference.
type NormChoice struct {
	Path   string
	Label  *widget.Label
	Choose *widget.Button
	Clear  *widget.Button
	// Window parents the folder dialog.
	Window fyne.Window
}

func newNormChoice() *NormChoice {
	n := &NormChoice{Label: widget.NewLabel("")}
	n.Label.Wrapping = fyne.TextWrapBreak
	n.Choose = widget.NewButtonWithIcon("Choose…", theme.FolderOpenIcon(), n.dialog)
	n.Clear = widget.NewButtonWithIcon("", theme.ContentClearIcon(), func() { n.Set("") })
	path := ""
	if a := fyne.CurrentApp(); a != nil {
		path = a.Preferences().String(NormPreference)
	}
	n.show(path)
	return n
}

// Set chooses the normative folder ("" for none) and keeps it in the preferences.
func (n *NormChoice) Set(path string) {
	if a := fyne.CurrentApp(); a != nil {
		a.Preferences().SetString(NormPreference, path)
	}
	n.show(path)
}

// Use chooses the normative folder for this session only (hubscope --norm), leaving the
// preferences as they are.
func (n *NormChoice) Use(path string) { n.show(path) }

func (n *NormChoice) show(path string) {
	n.Path = path
	if path == "" {
		n.Label.SetText("none: scans are not compared with a cohort")
		n.Clear.Disable()
		return
	}
	n.Label.SetText(filepath.Base(path) + " (" + filepath.Dir(path) + ")")
	n.Clear.Enable()
}

func (n *NormChoice) dialog() {
	if n.Window == nil {
		return
	}
	d := dialog.NewFolderOpen(func(u fyne.ListableURI, err error) {
		if err != nil {
			dialog.ShowError(fmt.Errorf("normative folder: %w", err), n.Window)
			return
		}
		if u != nil {
			n.Set(u.Path())
		}
	}, n.Window)
	d.Show()
}

func (n *NormChoice) content() fyne.CanvasObject {
	return container.NewBorder(nil, nil, nil, container.NewHBox(n.Choose, n.Clear), n.Label)
}

// SetSweep sets the threshold sweep (hubscope --sweep): the form's binding at once, so the
// next Settings has it (an entry's text reaches its binding later).
func (f *SettingsForm) SetSweep(spec string) {
	f.sweep.Set(spec)
	f.validate()
}

// SetCleaning selects the cleaning preset named by its settings value (hubscope --denoise:
// auto, simple, scrubbing, compcor, none), as the Cleaning picker does; an unknown name is an
// error listing the known ones.
func (f *SettingsForm) SetCleaning(strategy string) error {
	for _, c := range cleaningChoices {
		if c.Value == strategy {
			f.Cleaning.SetSelected(c.Label)
			return nil
		}
	}
	var known []string
	for _, c := range cleaningChoices {
		known = append(known, c.Value)
	}
	return fmt.Errorf("cleaning %q: want one of %s", strategy, strings.Join(known, ", "))
}

// sweepSyntax is the form of a threshold sweep the helper takes (package sweep): a kind and a
// range LO:HI:STEP or a comma list.
var sweepSyntax = regexp.MustCompile(`^(r|density)=\s*[-+0-9.eE]+\s*(:\s*[-+0-9.eE]+\s*:\s*[-+0-9.eE]+|(,\s*[-+0-9.eE]+\s*)*)$`)

// sweepProblem says what is wrong with a typed sweep ("" when it looks right; the helper checks
// the values).
func sweepProblem(s string) string {
	s = strings.TrimSpace(s)
	if s == "" || sweepSyntax.MatchString(s) {
		return ""
	}
	return fmt.Sprintf("A threshold sweep is written r=LO:HI:STEP, density=LO:HI:STEP or a list such as r=0.3,0.4,0.5 (you typed %q).", s)
}

// AtlasChoice is the label image of a region network on the helper's disk (settings' atlas;
// desktop only: the web transport refuses files): a 3D NIfTI of region numbers on the scan's
// space, with its names beside it as MRIcron's .nii.txt, or numbered regions without.
type AtlasChoice struct {
	Path   string
	Label  *widget.Label
	Choose *widget.Button
	// Window parents the file dialog.
	Window fyne.Window
	// changed is called after a choice.
	changed func()
}

func newAtlasChoice(changed func()) *AtlasChoice {
	a := &AtlasChoice{Label: widget.NewLabel("none"), changed: changed}
	a.Label.Wrapping = fyne.TextWrapBreak
	a.Choose = widget.NewButtonWithIcon("Choose…", theme.FileIcon(), a.dialog)
	a.Choose.Disable() // until "Atlas regions (label image file)" is chosen
	return a
}

// Set chooses the label image ("" for none).
func (a *AtlasChoice) Set(path string) {
	a.Path = path
	if path == "" {
		a.Label.SetText("none")
	} else {
		a.Label.SetText(filepath.Base(path) + " (" + filepath.Dir(path) + ")")
	}
	if a.changed != nil {
		a.changed()
	}
}

func (a *AtlasChoice) dialog() {
	if a.Window == nil {
		return
	}
	d := dialog.NewFileOpen(func(r fyne.URIReadCloser, err error) {
		if err != nil {
			dialog.ShowError(fmt.Errorf("atlas: %w", err), a.Window)
			return
		}
		if r != nil {
			r.Close()
			a.Set(r.URI().Path())
		}
	}, a.Window)
	d.SetFilter(storage.NewExtensionFileFilter([]string{".nii", ".gz"}))
	d.Show()
}

func (a *AtlasChoice) content() fyne.CanvasObject {
	return container.NewBorder(nil, nil, nil, a.Choose, a.Label)
}
