package bundle

import (
	"bufio"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"os"
	"runtime"
	"strings"
	"syscall"
	"time"
)

// SHA256File returns the hex SHA-256 of a file's bytes, read as a stream (provenance.json's
// input checksum; `sha256sum FILE` prints the same digest).
func SHA256File(path string) (string, error) {
	f, err := os.Open(path)
	if err != nil {
		return "", fmt.Errorf("checksum: %w", err)
	}
	defer f.Close()
	h := sha256.New()
	if _, err := io.Copy(h, f); err != nil {
		return "", fmt.Errorf("checksum %s: %w", path, err)
	}
	return hex.EncodeToString(h.Sum(nil)), nil
}

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

// DescribeInput returns the size and SHA-256 of an input file.
func DescribeInput(path string) (Input, error) {
	fi, err := os.Stat(path)
	if err != nil {
		return Input{}, fmt.Errorf("checksum: %w", err)
	}
	sum, err := SHA256File(path)
	if err != nil {
		return Input{}, err
	}
	return Input{Path: path, Bytes: fi.Size(), SHA256: sum}, nil
}

// Host describes the machine an analysis ran on, for provenance.json.
type Host struct {
	OS        string `json:"os"`        // GOOS, e.g. "linux"
	Arch      string `json:"arch"`      // GOARCH, e.g. "amd64"
	CPUModel  string `json:"cpu_model"` // "model name" of /proc/cpuinfo; "" where unknown
	CPUs      int    `json:"cpus"`      // logical CPUs usable by the process
	GoVersion string `json:"go_version"`
}

// ThisHost describes the running machine.
func ThisHost() Host {
	return Host{
		OS:        runtime.GOOS,
		Arch:      runtime.GOARCH,
		CPUModel:  cpuModel("/proc/cpuinfo"),
		CPUs:      runtime.NumCPU(),
		GoVersion: runtime.Version(),
	}
}

// cpuModel reads the first "model name" (x86) or "Model"/"Hardware" (ARM) line of a Linux
// cpuinfo file; elsewhere the file does not exist and the model is unknown ("").
func cpuModel(path string) string {
	f, err := os.Open(path)
	if err != nil {
		return ""
	}
	defer f.Close()
	var fallback string
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		key, val, ok := strings.Cut(sc.Text(), ":")
		if !ok {
			continue
		}
		switch strings.TrimSpace(key) {
		case "model name":
			return strings.TrimSpace(val)
		case "Model", "Hardware":
			if fallback == "" {
				fallback = strings.TrimSpace(val)
			}
		}
	}
	return fallback
}

// processAlive reports whether a process with this id runs on this host. Where it cannot
// tell (Windows, which offers no signal 0), an existing handle counts as alive.
func processAlive(pid int) bool {
	if pid <= 0 {
		return false
	}
	p, err := os.FindProcess(pid)
	if err != nil {
		return false
	}
	if runtime.GOOS == "windows" {
		p.Release()
		return true
	}
	err = p.Signal(syscall.Signal(0))
	return err == nil || errors.Is(err, syscall.EPERM)
}
