// Package watch queues the scans that arrive in a watched folder: a file is handed on once
// its size has stopped changing for a settle time, so a scan still being copied or written by
// the scanner's export is never analysed half-written. Partial or temporary files and files
// that are not NIfTI are ignored with a note, and a file already handed on is not queued again.
//
// The package has no Fyne imports; the name rules below also build for js/wasm, where the
// folder watcher itself (fsnotify) is left out.
package watch

import (
	"path/filepath"
	"strings"
)

// Kind is what a file's name says it is.
type Kind int

const (
	// Scan is a NIfTI scan (.nii or .nii.gz).
	Scan Kind = iota
	// Partial is a file still being written or a temporary file (browser downloads, rsync,
	// editors, hidden files): it will be renamed or removed when complete.
	Partial
	// Other is any other file.
	Other
	// Archive is a .zip, a scanner's DICOM export: the helper converts it with dcm2niix and
	// picks its BOLD series (the repository's docs/dicom.md). Queued like a scan.
	Archive
)

// partialSuffixes are the endings copy tools, browsers and editors give unfinished files.
var partialSuffixes = []string{".part", ".partial", ".crdownload", ".download", ".tmp", ".temp", ".swp", "~", ".filepart", ".!sync"}

// Classify tells scans from partial/temporary files and other files by name alone.
func Classify(name string) Kind {
	base := filepath.Base(name)
	n := strings.ToLower(base)
	// Hidden files and "~$name" are temporaries (rsync writes ".name.XXXXXX", Office "~$name").
	if strings.HasPrefix(base, ".") || strings.HasPrefix(base, "~$") {
		return Partial
	}
	for _, s := range partialSuffixes {
		if strings.HasSuffix(n, s) {
			return Partial
		}
	}
	if strings.HasSuffix(n, ".nii") || strings.HasSuffix(n, ".nii.gz") {
		return Scan
	}
	if strings.HasSuffix(n, ".zip") {
		return Archive
	}
	return Other
}
