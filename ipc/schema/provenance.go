package schema

import "time"

// Provenance is the content of provenance.json: enough to tell exactly what produced a bundle
// and to run it again. Parameters is the caller's own options struct, written as it marshals.
type Provenance struct {
	Software   string        `json:"software"` // "HubScope"
	Version    string        `json:"version"`
	Created    time.Time     `json:"created"` // UTC, RFC 3339
	Input      Input         `json:"input"`
	Parameters any           `json:"parameters"`
	Backend    string        `json:"backend"` // "cpu" or "cuda"
	Device     string        `json:"device"`  // GPU model for cuda; "" for cpu
	Host       Host          `json:"host"`
	Timings    []StageTiming `json:"timings"` // in the order the stages ran
	Notes      []string      `json:"notes,omitempty"`
	// InputChecks say which TR was used and why, and what the reader found odd in the
	// scan's header and worked around (nil for runs that did not record them).
	InputChecks *InputChecks `json:"input_checks,omitempty"`
	// Conversion records how a DICOM input became the analysed NIfTI (nil for NIfTI input).
	Conversion *Conversion `json:"conversion,omitempty"`
	// Subjects are a group bundle's every subject, in the group's order, each with its scan's
	// size and SHA-256 (Input is the first of them); nil for one scan.
	Subjects []GroupSubject `json:"subjects,omitempty"`
}

// Conversion is a DICOM input's conversion (docs/dicom.md): what was given, which series was
// analysed and why, and the converter. The converted NIfTI and its anonymised BIDS sidecar
// are in the bundle (NIfTI, Sidecar: paths inside it), so the run can be repeated without
// the DICOM; Input then describes that NIfTI.
type Conversion struct {
	Source      string   `json:"source"` // the folder, .zip or DICOMDIR as given
	Kind        string   `json:"kind"`   // folder, zip, DICOMDIR or file
	Files       int      `json:"files"`  // files looked at
	Series      int      `json:"series"`
	Description string   `json:"description"`
	Reason      string   `json:"reason"` // the picking rule, or "chosen with --series"
	Volumes     int      `json:"volumes"`
	Tool        string   `json:"tool"` // "dcm2niix"
	ToolVersion string   `json:"tool_version"`
	Warnings    []string `json:"warnings"`     // the converter's, in its words
	Removed     []string `json:"removed_keys"` // identity keys taken out of the sidecar
	NIfTI       string   `json:"nifti"`        // e.g. "input/series_6.nii"
	Sidecar     string   `json:"sidecar"`      // e.g. "input/series_6.json"
}

// InputChecks are the input's header findings for provenance.json.
type InputChecks struct {
	TR       string          `json:"tr"` // the TR used and where it comes from, in words
	Warnings []HeaderWarning `json:"warnings"`
}

// HeaderWarning is one header oddity (nifti.Warning, written out): its level on nibabel's
// scale (20 information, 30 warning, 35 probably wrong, 40 untrustworthy), the field, the
// problem, what the reader did about it, and whose check found it ("nibabel": the same
// report nibabel's header check gives; "hubscope": a check of our own).
type HeaderWarning struct {
	File    string `json:"file"`
	Level   int    `json:"level"`
	Field   string `json:"field"`
	Problem string `json:"problem"`
	Fix     string `json:"fix"`
	Source  string `json:"source"`
}

// String is the warning in one line, as the command line's summary prints it: "FIELD:
// PROBLEM (FIX)".
func (w HeaderWarning) String() string { return w.Field + ": " + w.Problem + " (" + w.Fix + ")" }

// Input identifies an input file by content, so a bundle can be matched to its scan even after
// the file was moved or renamed.
type Input struct {
	Path   string `json:"path"`
	Bytes  int64  `json:"bytes"`
	SHA256 string `json:"sha256"`
}

// StageTiming is the wall-clock time of one pipeline stage.
type StageTiming struct {
	Stage   string  `json:"stage"`
	Seconds float64 `json:"seconds"`
}

// Host describes the machine an analysis ran on, for provenance.json.
type Host struct {
	OS        string `json:"os"`        // GOOS, e.g. "linux"
	Arch      string `json:"arch"`      // GOARCH, e.g. "amd64"
	CPUModel  string `json:"cpu_model"` // "model name" of /proc/cpuinfo; "" where unknown
	CPUs      int    `json:"cpus"`      // logical CPUs usable by the process
	GoVersion string `json:"go_version"`
}
