// Package quality is the Quality tab: how clean the scan was before its network was built —
// the cleaning strategy, volumes kept, censored and dropped, the head-motion summary from the
// framewise displacement, the helper's FD trace and carpet plot (qc/fd.png, qc/carpet.png),
// and a warning in words when motion makes the network unreliable.
package quality

import (
	"context"
	"encoding/json"
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

	"github.com/hubscope/hubscope/ipc"
)

// The bundle's quality-control files (written by the helper's pipeline when it cleans).
const (
	DenoiseFile = "qc/denoise.json"
	FDFile      = "qc/fd.png"
	CarpetFile  = "qc/carpet.png"
)

// Limits beyond which a scan's network is called unreliable: Parkes et al. 2018 (NeuroImage
// 171:415) exclude, in their lenient criterion, a scan whose mean framewise displacement
// exceeds 0.55 mm or any of whose volumes moved more than 5 mm, and with scrubbing, a scan with
// fewer than 4 minutes of data left.
const (
	MaxMeanFD      = 0.55 // mm
	MaxFD          = 5.0  // mm
	MinMinutesLeft = 4.0
)

// Report is the part of qc/denoise.json the tab shows.
type Report struct {
	Strategy    string     `json:"strategy"`
	TR          float64    `json:"tr_seconds"`
	VolumesIn   int        `json:"volumes_in"`
	VolumesKept int        `json:"volumes_kept"`
	Dropped     int        `json:"dropped_volumes"`
	Censored    []int      `json:"censored_volumes"`
	Variance    float64    `json:"variance_removed"`
	FD          []*float64 `json:"framewise_displacement"` // null where the table says n/a
}

// Assessment is what the tab says about a scan's motion and what is left of it.
type Assessment struct {
	Report
	// MeanFD and PeakFD over the volumes with a value (NaN without an FD trace).
	MeanFD, PeakFD float64
	// MinutesLeft is the kept volumes' duration (NaN without a TR).
	MinutesLeft float64
	// Warnings say, one sentence each, why the network may be unreliable (none: fine).
	Warnings []string
}

// Assess reads qc/denoise.json and checks it against the limits. scanTR is the scan's TR from
// metrics.json (0: unknown), used when the cleaning report does not state one (it states the
// TR only when the cleaning needed it, for a band-pass).
func Assess(b []byte, scanTR float64) (*Assessment, error) {
	var a Assessment
	if err := json.Unmarshal(b, &a.Report); err != nil {
		return nil, fmt.Errorf("%s: %w", DenoiseFile, err)
	}
	if a.TR <= 0 {
		a.TR = scanTR
	}
	if a.VolumesIn <= 0 || a.VolumesKept < 0 || a.VolumesKept > a.VolumesIn {
		return nil, fmt.Errorf("%s: %d volumes kept of %d", DenoiseFile, a.VolumesKept, a.VolumesIn)
	}
	a.MeanFD, a.PeakFD, a.MinutesLeft = math.NaN(), math.NaN(), math.NaN()
	var sum float64
	n := 0
	for _, v := range a.FD {
		if v != nil && !math.IsNaN(*v) {
			sum += *v
			n++
			if n == 1 || *v > a.PeakFD {
				a.PeakFD = *v
			}
		}
	}
	if n > 0 {
		a.MeanFD = sum / float64(n)
	}
	if a.TR > 0 {
		a.MinutesLeft = float64(a.VolumesKept) * a.TR / 60
	}
	if a.MeanFD > MaxMeanFD {
		a.Warnings = append(a.Warnings, fmt.Sprintf("Mean head motion %.2f mm per volume is above %.2f mm: motion can make the network unreliable.", a.MeanFD, MaxMeanFD))
	}
	if a.PeakFD > MaxFD {
		a.Warnings = append(a.Warnings, fmt.Sprintf("One volume moved %.1f mm (more than %.0f mm): a large movement.", a.PeakFD, MaxFD))
	}
	if a.MinutesLeft < MinMinutesLeft {
		a.Warnings = append(a.Warnings, fmt.Sprintf("Only %.1f minutes of data are left after censoring (fewer than %.0f): too little for a reliable network.", a.MinutesLeft, MinMinutesLeft))
	}
	return &a, nil
}

// Lines are the assessment in words, one fact a line.
func (a *Assessment) Lines() []string {
	out := []string{"Cleaning: " + a.Strategy}
	kept := fmt.Sprintf("Volumes: %d kept of %d (%d dropped at the start, %d censored)", a.VolumesKept, a.VolumesIn, a.Dropped, len(a.Censored))
	if !math.IsNaN(a.MinutesLeft) {
		kept += fmt.Sprintf(" · %.1f minutes left", a.MinutesLeft)
	}
	out = append(out, kept)
	if math.IsNaN(a.MeanFD) {
		out = append(out, "Head motion: no framewise displacement (no motion parameters in the confounds, and the scan was not realigned)")
	} else {
		out = append(out, fmt.Sprintf("Head motion: mean framewise displacement %.3f mm, largest %.3f mm", a.MeanFD, a.PeakFD))
	}
	out = append(out, fmt.Sprintf("Variance removed by the cleaning: %.0f %%", 100*a.Variance))
	return out
}

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

// Tab is the Quality tab of one job.
type Tab struct {
	widget.BaseWidget
	Summary, Warning *widget.Label
	FD, Carpet       *canvas.Image
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
	t.content = container.NewVBox(t.Warning, t.Summary,
		widget.NewLabelWithStyle("Framewise displacement, mm (the censoring threshold marked when one was set)", fyne.TextAlignLeading, fyne.TextStyle{Bold: true}), t.FD,
		widget.NewLabelWithStyle("Carpet plot: before cleaning (top), after (bottom); censored volumes red", fyne.TextAlignLeading, fyne.TextStyle{Bold: true}), t.Carpet)
	t.ExtendBaseWidget(t)
	go t.load(ctx, svc, s.Job.ID, scanTR, listed(s, FDFile), listed(s, CarpetFile))
	return t
}

// Loaded is closed once the tab shows what it could fetch.
func (t *Tab) Loaded() <-chan struct{} { return t.loaded }

func (t *Tab) CreateRenderer() fyne.WidgetRenderer { return widget.NewSimpleRenderer(t.content) }

var errNotWritten = fmt.Errorf("not in the bundle")

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

func (t *Tab) load(ctx context.Context, svc ipc.Service, job string, scanTR float64, withFD, withCarpet bool) {
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
