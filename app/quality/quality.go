// Package quality is the Quality tab: how clean the scan was before its network was built —
// the cleaning strategy, volumes kept, censored and dropped, the head-motion summary from the
// framewise displacement, the helper's FD trace and carpet plot (qc/fd.png, qc/carpet.png),
// and a warning in words when motion makes the network unreliable.
package quality

import (
	"context"
	"fmt"
	"image"
	"image/png"
	"io"
	"math"
	"strings"

	"fyne.io/fyne/v2"
	"fyne.io/fyne/v2/canvas"
	"fyne.io/fyne/v2/container"
	"fyne.io/fyne/v2/widget"

	"github.com/hubscope/hubscope/app/report"
	"github.com/hubscope/hubscope/app/slices/lineplot"
	"github.com/hubscope/hubscope/ipc"
	"github.com/hubscope/hubscope/ipc/settings"
)

// The bundle's quality-control files (written by the helper's pipeline when it cleans).
const (
	DenoiseFile = report.QCFile
	FDFile      = "qc/fd.png"
	CarpetFile  = "qc/carpet.png"
)

// The motion limits, the cleaning report and its assessment live in app/report (one reading
// for the Quality tab and the PDF/HTML report, which the helper's report command also writes).
const (
	MaxMeanFD      = report.MaxMeanFD
	MaxFD          = report.MaxFD
	MinMinutesLeft = report.MinMinutesLeft
)

type (
	Report     = report.QCReport
	Assessment = report.Assessment
)

// Assess reads qc/denoise.json and checks it against the limits (report.Assess).
func Assess(b []byte, scanTR float64) (*Assessment, error) { return report.Assess(b, scanTR) }

// HasQC says whether a job's bundle holds the cleaning report the tab needs.
func HasQC(s ipc.Summary) bool { return listed(s, DenoiseFile) }

func listed(s ipc.Summary, name string) bool {
	for _, f := range s.Files {
		if f.Name == name {
			return true
		}
	}
	return false
}

// DVARSThreshold is the standardised-DVARS censoring threshold of a job's settings: the one set
// (--dvars), else the scrubbing preset's 3 (nilearn 0.10.4's load_confounds_strategy), else 0
// (no DVARS censoring).
func DVARSThreshold(s ipc.Summary) float64 {
	switch {
	case s.Job.Settings.DVARS > 0:
		return s.Job.Settings.DVARS
	case s.Job.Settings.Denoise == settings.DenoiseScrubbing:
		return 3
	}
	return 0
}

// Tab is the Quality tab of one job.
type Tab struct {
	widget.BaseWidget
	Summary, Warning *widget.Label
	FD, Carpet       *canvas.Image
	// DVARS is the DVARS trace beside the FD trace: standardised DVARS from the confounds
	// table with the censoring threshold when the table has it, else the series' DVARS before
	// cleaning; DVARSAfter the cleaned series'.
	DVARS, DVARSAfter *lineplot.Plot
	// Assessment is set once loaded (nil before, or when the report could not be read).
	Assessment *Assessment
	content    fyne.CanvasObject
	loaded     chan struct{}
}

// NewTab builds the tab and starts fetching the QC files the job's bundle lists (s.Files)
// through svc (a figure the helper did not write — no FD trace without motion parameters — is
// not asked for); scanTR as for Assess.
func NewTab(ctx context.Context, svc ipc.Service, s ipc.Summary, scanTR float64) *Tab {
	t := &Tab{Summary: widget.NewLabel("Loading the quality report…"), Warning: widget.NewLabel(""), loaded: make(chan struct{})}
	t.Summary.Wrapping = fyne.TextWrapWord
	t.Warning.Wrapping = fyne.TextWrapWord
	t.Warning.Importance = widget.DangerImportance
	t.Warning.Hide()
	t.FD, t.Carpet = canvas.NewImageFromImage(nil), canvas.NewImageFromImage(nil)
	for _, im := range []*canvas.Image{t.FD, t.Carpet} {
		im.FillMode = canvas.ImageFillContain
	}
	t.FD.SetMinSize(fyne.NewSize(480, 180))
	t.Carpet.SetMinSize(fyne.NewSize(480, 360)) // 400 voxels × time, twice: a tall image
	t.DVARS, t.DVARSAfter = lineplot.New("DVARS", "s"), lineplot.New("DVARS after cleaning, SD", "s")
	dvars := container.NewGridWithColumns(2, container.NewGridWrap(fyne.NewSize(300, 150), t.DVARS), container.NewGridWrap(fyne.NewSize(300, 150), t.DVARSAfter))
	t.content = container.NewVBox(t.Warning, t.Summary,
		widget.NewLabelWithStyle("Framewise displacement, mm (the censoring threshold marked when one was set)", fyne.TextAlignLeading, fyne.TextStyle{Bold: true}), t.FD,
		widget.NewLabelWithStyle("DVARS: how much the whole image changed from each volume to the next (the censoring threshold dashed)", fyne.TextAlignLeading, fyne.TextStyle{Bold: true}), dvars,
		widget.NewLabelWithStyle("Carpet plot: before cleaning (top), after (bottom); censored volumes red", fyne.TextAlignLeading, fyne.TextStyle{Bold: true}), t.Carpet)
	t.ExtendBaseWidget(t)
	go t.load(ctx, svc, s.Job.ID, scanTR, DVARSThreshold(s), listed(s, FDFile), listed(s, CarpetFile))
	return t
}

// Loaded is closed once the tab shows what it could fetch.
func (t *Tab) Loaded() <-chan struct{} { return t.loaded }

func (t *Tab) CreateRenderer() fyne.WidgetRenderer { return widget.NewSimpleRenderer(t.content) }

var errNotWritten = fmt.Errorf("not in the bundle")

// showDVARS plots the DVARS traces against time (volume × TR, or the volume number without a
// TR): standardised DVARS with the censoring threshold when the confounds table has it, else
// DVARS before cleaning (% of the mean); and after cleaning.
func (t *Tab) showDVARS(a *Assessment, cut float64) {
	xs := func(n int) []float64 {
		x := make([]float64, n)
		for i := range x {
			x[i] = float64(i)
			if a.TR > 0 {
				x[i] *= a.TR
			}
		}
		return x
	}
	std := make([]float64, len(a.StdDVARS))
	has := false
	for i, v := range a.StdDVARS {
		std[i] = math.NaN()
		if v != nil {
			std[i], has = *v, true
		}
	}
	switch {
	case has:
		t.DVARS.SetTitle("Standardised DVARS (confounds table)")
		t.DVARS.SetData(xs(len(std)), std)
		if cut > 0 {
			t.DVARS.SetLevel(cut)
		}
	case len(a.DVARSBefore) > 0:
		t.DVARS.SetTitle("DVARS before cleaning, % of the mean")
		t.DVARS.SetData(xs(len(a.DVARSBefore)), a.DVARSBefore)
	default:
		t.DVARS.SetTitle("DVARS: not in the report")
	}
	if len(a.DVARSAfter) > 0 {
		t.DVARSAfter.SetData(xs(len(a.DVARSAfter)), a.DVARSAfter)
	}
}

func readAll(ctx context.Context, svc ipc.Service, job, name string) ([]byte, error) {
	rc, _, err := svc.OpenFile(ctx, job, name)
	if err != nil {
		return nil, err
	}
	defer rc.Close()
	return io.ReadAll(io.LimitReader(rc, 64<<20))
}

func readPNG(ctx context.Context, svc ipc.Service, job, name string) (image.Image, error) {
	b, err := readAll(ctx, svc, job, name)
	if err != nil {
		return nil, err
	}
	img, err := png.Decode(strings.NewReader(string(b)))
	if err != nil {
		return nil, fmt.Errorf("%s: %w", name, err)
	}
	return img, nil
}

func (t *Tab) load(ctx context.Context, svc ipc.Service, job string, scanTR, dvarsCut float64, withFD, withCarpet bool) {
	defer close(t.loaded)
	var a *Assessment
	b, err := readAll(ctx, svc, job, DenoiseFile)
	if err == nil {
		a, err = Assess(b, scanTR)
	}
	var fd, carpet image.Image
	fdErr, carpetErr := errNotWritten, errNotWritten
	if withFD {
		fd, fdErr = readPNG(ctx, svc, job, FDFile)
	}
	if withCarpet {
		carpet, carpetErr = readPNG(ctx, svc, job, CarpetFile)
	}
	if ctx.Err() != nil {
		return
	}
	fyne.DoAndWait(func() {
		if err != nil {
			t.Summary.SetText("The quality report could not be read: " + err.Error())
		} else {
			t.Assessment = a
			t.Summary.SetText(strings.Join(a.Lines(), "\n"))
			if len(a.Warnings) > 0 {
				t.Warning.SetText("Warning: " + strings.Join(a.Warnings, " "))
				t.Warning.Show()
			}
			t.showDVARS(a, dvarsCut)
		}
		if fdErr == nil {
			t.FD.Image = fd
			t.FD.Refresh()
		}
		if carpetErr == nil {
			t.Carpet.Image = carpet
			t.Carpet.Refresh()
		}
		// The summary grew from one line to several: lay the column out again.
		t.content.(*fyne.Container).Refresh()
	})
}
