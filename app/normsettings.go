package app

import (
	"fmt"
	"path/filepath"
	"regexp"
	"strings"

	"fyne.io/fyne/v2"
	"fyne.io/fyne/v2/container"
	"fyne.io/fyne/v2/dialog"
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
