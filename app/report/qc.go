package report

import (
	"encoding/json"
	"fmt"
	"math"

	"github.com/hubscope/hubscope/ipc/schema"
)

// QCFile is the bundle's cleaning report (schema.DenoiseQC, written by the helper's pipeline
// when it cleans the series); the Quality tab and the report both read it through Assess.
const QCFile = schema.DenoiseQCFile

// Limits beyond which a scan's network is called unreliable: Parkes et al. 2018 (NeuroImage
// 171:415) exclude, in their lenient criterion, a scan whose mean framewise displacement
// exceeds 0.55 mm or any of whose volumes moved more than 5 mm, and with scrubbing, a scan with
// fewer than 4 minutes of data left.
const (
	MaxMeanFD      = 0.55 // mm
	MaxFD          = 5.0  // mm
	MinMinutesLeft = 4.0
)

// QCReport is qc/denoise.json, which the Quality tab and the report show.
type QCReport = schema.DenoiseQC

// Assessment is what the Quality tab and the report say about a scan's motion and what is left of it.
type Assessment struct {
	QCReport
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
	if err := json.Unmarshal(b, &a.QCReport); err != nil {
		return nil, fmt.Errorf("%s: %w", QCFile, err)
	}
	if a.TR <= 0 {
		a.TR = scanTR
	}
	if a.VolumesIn <= 0 || a.VolumesKept < 0 || a.VolumesKept > a.VolumesIn {
		return nil, fmt.Errorf("%s: %d volumes kept of %d", QCFile, a.VolumesKept, a.VolumesIn)
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
	out = append(out, fmt.Sprintf("Variance removed by the cleaning: %.0f %%", 100*a.VarianceRemoved))
	return out
}
