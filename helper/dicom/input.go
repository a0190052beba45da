package dicom

import (
	"archive/zip"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	"github.com/hubscope/hubscope/helper/scratch"
)

// Bounds on a .zip export, against zip bombs (an archive that expands without end) and
// archives built to exhaust the disk. A scanner's export of one session — a few thousand
// files of at most a few MiB, a few GiB in all — is far inside them.
var (
	MaxZipEntries    = 200_000
	MaxZipEntryBytes = int64(2 << 30)  // one expanded entry
	MaxZipTotalBytes = int64(16 << 30) // all entries together
	// MaxZipRatio bounds an entry's expansion (expanded/compressed) once it is past 1 MiB:
	// DICOM images deflate by 2–20×; a bomb's runs of zeros by 1,000× and more.
	MaxZipRatio = int64(1000)
)

// Source is a DICOM input made ready to read: the candidate files of a folder, a DICOMDIR's
// referenced files, or a .zip's entries extracted into a private temporary folder (removed
// by Close).
type Source struct {
	Path  string   // as given
	Kind  string   // "folder", "zip", "DICOMDIR" or "file"
	Files []string // candidate files, in a stable order
	tmp   string
}

// Close removes the extraction folder of a .zip (nothing for other inputs).
func (s *Source) Close() error {
	if s == nil || s.tmp == "" {
		return nil
	}
	err := os.RemoveAll(s.tmp)
	s.tmp = ""
	return err
}

// IsInput reports whether path names DICOM input rather than a NIfTI or matrix file: a
// folder, a .zip, a DICOMDIR, or a single .dcm/.ima file.
func IsInput(path string) bool {
	fi, err := os.Stat(path)
	if err != nil {
		return false
	}
	if fi.IsDir() {
		return true
	}
	switch strings.ToLower(filepath.Ext(path)) {
	case ".zip", ".dcm", ".ima":
		return true
	}
	return strings.EqualFold(filepath.Base(path), "DICOMDIR")
}

// namedLikeFile is the kind of file a folder's name claims ("NIfTI" for .nii, .nii.gz, .hdr,
// .img; "matrix" for .csv, .tsv, .txt, .npy), or "" for other names. Any folder is taken for
// DICOM input, so a folder called scan.nii.gz must be told apart from a NIfTI file in words.
func namedLikeFile(path string) string {
	name := strings.ToLower(filepath.Base(path))
	for _, ext := range []string{".nii", ".nii.gz", ".hdr", ".img"} {
		if strings.HasSuffix(name, ext) {
			return "NIfTI"
		}
	}
	for _, ext := range []string{".csv", ".tsv", ".txt", ".npy"} {
		if strings.HasSuffix(name, ext) {
			return "matrix"
		}
	}
	return ""
}

// Open prepares a DICOM input. tmpDir is where a .zip is extracted (its own private
// subfolder; "" for the system's temporary folder).
func Open(path, tmpDir string) (*Source, error) {
	fi, err := os.Stat(path)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, unwrap(err))
	}
	switch {
	case fi.IsDir():
		files, err := walk(path)
		if err != nil {
			return nil, err
		}
		return &Source{Path: path, Kind: "folder", Files: files}, nil
	case strings.EqualFold(filepath.Ext(path), ".zip"):
		return openZip(path, tmpDir)
	case strings.EqualFold(filepath.Base(path), "DICOMDIR"):
		return openDICOMDIR(path)
	default:
		return &Source{Path: path, Kind: "file", Files: []string{path}}, nil
	}
}

// walk lists the regular files under dir (recursively; symbolic links to files are read,
// links to folders are not followed, so a link cannot make the walk loop).
func walk(dir string) ([]string, error) {
	var files []string
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return fmt.Errorf("%s: %w", p, unwrap(err))
		}
		switch {
		case d.IsDir():
			return nil
		case d.Type().IsRegular():
			files = append(files, p)
		case d.Type()&fs.ModeSymlink != 0:
			if fi, err := os.Stat(p); err == nil && fi.Mode().IsRegular() {
				files = append(files, p)
			}
		}
		return nil
	})
	return files, err
}

// ZipError is a .zip refused for safety (zip-slip, zip bomb, links) or unreadable.
type ZipError struct {
	Path, Entry, Problem string
}

func (e *ZipError) Error() string {
	if e.Entry == "" {
		return fmt.Sprintf("%s: %s", e.Path, e.Problem)
	}
	return fmt.Sprintf("%s: entry %q %s", e.Path, e.Entry, e.Problem)
}

// openZip extracts a .zip into a private folder, refusing entries that would land outside
// it (zip-slip: absolute names, "..", drive letters, backslashes), links, and archives past
// the bounds above; the bounds are checked against the declared sizes first and then
// against the bytes actually expanded, so an archive that lies about its sizes is caught
// too. On any refusal nothing is left behind.
func openZip(path, tmpDir string) (src *Source, err error) {
	zr, err := zip.OpenReader(path)
	if err != nil {
		return nil, &ZipError{Path: path, Problem: "not a readable zip archive: " + strings.TrimPrefix(err.Error(), "zip: ")}
	}
	defer zr.Close()
	if err := checkZip(path, &zr.Reader); err != nil {
		return nil, err
	}
	tmp, err := scratch.MkdirTemp(tmpDir, "dicom-zip")
	if err != nil {
		return nil, fmt.Errorf("%s: extract: %w", path, err)
	}
	defer func() {
		if err != nil {
			os.RemoveAll(tmp)
		}
	}()
	files, err := extractZip(path, &zr.Reader, tmp)
	if err != nil {
		return nil, err
	}
	return &Source{Path: path, Kind: "zip", Files: files, tmp: tmp}, nil
}

// checkZip refuses an archive from its directory alone, before anything is written.
func checkZip(path string, zr *zip.Reader) error {
	if len(zr.File) > MaxZipEntries {
		return &ZipError{Path: path, Problem: fmt.Sprintf("holds %d entries, more than the %d a DICOM export may hold (zip bomb?); refused", len(zr.File), MaxZipEntries)}
	}
	var total uint64
	for _, f := range zr.File {
		if err := entryName(path, f.Name); err != nil {
			return err
		}
		mode := f.Mode()
		if mode&fs.ModeSymlink != 0 || mode&(fs.ModeDevice|fs.ModeNamedPipe|fs.ModeSocket|fs.ModeCharDevice) != 0 {
			return &ZipError{Path: path, Entry: f.Name, Problem: "is a link or special file; refused"}
		}
		if mode.IsDir() {
			continue
		}
		if f.UncompressedSize64 > uint64(MaxZipEntryBytes) {
			return &ZipError{Path: path, Entry: f.Name, Problem: fmt.Sprintf("expands to %d bytes, more than the %d allowed for one file (zip bomb?); refused", f.UncompressedSize64, MaxZipEntryBytes)}
		}
		if err := ratio(path, f.Name, f.UncompressedSize64, f.CompressedSize64); err != nil {
			return err
		}
		total += f.UncompressedSize64
		if total > uint64(MaxZipTotalBytes) {
			return &ZipError{Path: path, Problem: fmt.Sprintf("expands to more than %d bytes in all (zip bomb?); refused", MaxZipTotalBytes)}
		}
	}
	return nil
}

func ratio(path, name string, expanded, compressed uint64) error {
	if expanded > 1<<20 && expanded/max(compressed, 1) > uint64(MaxZipRatio) {
		return &ZipError{Path: path, Entry: name, Problem: fmt.Sprintf("expands %d-fold (%d bytes from %d), past the %d-fold a DICOM file reaches (zip bomb?); refused", expanded/max(compressed, 1), expanded, compressed, MaxZipRatio)}
	}
	return nil
}

// entryName refuses names that could leave the extraction folder (zip-slip).
func entryName(path, name string) error {
	clean := strings.TrimSuffix(name, "/")
	if clean == "" || strings.Contains(name, `\`) || strings.Contains(name, "\x00") || strings.HasPrefix(name, "/") ||
		(len(name) >= 2 && name[1] == ':') || !filepath.IsLocal(filepath.FromSlash(clean)) {
		return &ZipError{Path: path, Entry: name, Problem: "would be written outside the extraction folder (zip-slip); refused"}
	}
	for _, part := range strings.Split(clean, "/") {
		if part == ".." {
			return &ZipError{Path: path, Entry: name, Problem: "would be written outside the extraction folder (zip-slip); refused"}
		}
	}
	return nil
}

func extractZip(path string, zr *zip.Reader, dir string) ([]string, error) {
	var files []string
	var total int64
	for _, f := range zr.File {
		if f.Mode().IsDir() {
			continue
		}
		dst := filepath.Join(dir, filepath.FromSlash(f.Name))
		if rel, err := filepath.Rel(dir, dst); err != nil || !filepath.IsLocal(rel) {
			return nil, &ZipError{Path: path, Entry: f.Name, Problem: "would be written outside the extraction folder (zip-slip); refused"}
		}
		if err := os.MkdirAll(filepath.Dir(dst), 0o700); err != nil {
			return nil, fmt.Errorf("%s: extract: %w", path, err)
		}
		n, err := extractEntry(path, f, dst, MaxZipTotalBytes-total)
		total += n
		if err != nil {
			return nil, err
		}
		files = append(files, dst)
	}
	return files, nil
}

// extractEntry copies one entry, counting the bytes really expanded against the bounds.
func extractEntry(path string, f *zip.File, dst string, left int64) (int64, error) {
	rc, err := f.Open()
	if err != nil {
		return 0, &ZipError{Path: path, Entry: f.Name, Problem: "cannot be read: " + strings.TrimPrefix(err.Error(), "zip: ")}
	}
	defer rc.Close()
	out, err := os.OpenFile(dst, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
	if err != nil {
		if errors.Is(err, fs.ErrExist) {
			return 0, &ZipError{Path: path, Entry: f.Name, Problem: "appears twice in the archive; refused"}
		}
		return 0, fmt.Errorf("%s: extract: %w", path, err)
	}
	limit := min(MaxZipEntryBytes, left)
	n, err := io.Copy(out, io.LimitReader(rc, limit+1))
	if cerr := out.Close(); err == nil {
		err = cerr
	}
	switch {
	case n > limit && limit == MaxZipEntryBytes:
		return n, &ZipError{Path: path, Entry: f.Name, Problem: fmt.Sprintf("expands past the %d bytes allowed for one file (zip bomb?); refused", MaxZipEntryBytes)}
	case n > limit:
		return n, &ZipError{Path: path, Problem: fmt.Sprintf("expands to more than %d bytes in all (zip bomb?); refused", MaxZipTotalBytes)}
	case err != nil:
		return n, &ZipError{Path: path, Entry: f.Name, Problem: "cannot be read: " + strings.TrimPrefix(err.Error(), "zip: ")}
	}
	if err := ratio(path, f.Name, uint64(n), f.CompressedSize64); err != nil {
		return n, err
	}
	return n, nil
}

// openDICOMDIR lists the files a DICOMDIR references (paths relative to its folder, which
// must stay inside it); a missing one is an error, since a series would be incomplete.
func openDICOMDIR(path string) (*Source, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, unwrap(err))
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, unwrap(err))
	}
	h, err := ReadHeader(f, fi.Size())
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	if h.SOPClass != dicomdirSOPClass {
		return nil, fmt.Errorf("%s: not a DICOMDIR (its SOP class is %q)", path, h.SOPClass)
	}
	root := filepath.Dir(path)
	var files []string
	seen := map[string]bool{}
	missing := 0
	first := ""
	for _, ref := range h.Files {
		rel := filepath.FromSlash(ref)
		if !filepath.IsLocal(rel) {
			return nil, fmt.Errorf("%s: references %q, outside its folder; refused", path, ref)
		}
		p, ok := findFold(root, rel)
		if !ok {
			missing++
			if first == "" {
				first = ref
			}
			continue
		}
		if !seen[p] {
			seen[p] = true
			files = append(files, p)
		}
	}
	if missing > 0 {
		return nil, fmt.Errorf("%s: %d of the %d files it references are missing (first: %s); copy the whole export", path, missing, len(h.Files), first)
	}
	if len(files) == 0 {
		return nil, fmt.Errorf("%s: references no image files", path)
	}
	return &Source{Path: path, Kind: "DICOMDIR", Files: files}, nil
}

// findFold finds rel under root, matching each component without regard to case (a
// DICOMDIR names files in upper case; copies from CDs may be lower case).
func findFold(root, rel string) (string, bool) {
	p := filepath.Join(root, rel)
	if fi, err := os.Stat(p); err == nil && fi.Mode().IsRegular() {
		return p, true
	}
	cur := root
	for _, part := range strings.Split(rel, string(filepath.Separator)) {
		ents, err := os.ReadDir(cur)
		if err != nil {
			return "", false
		}
		found := false
		for _, e := range ents {
			if strings.EqualFold(e.Name(), part) {
				cur, found = filepath.Join(cur, e.Name()), true
				break
			}
		}
		if !found {
			return "", false
		}
	}
	fi, err := os.Stat(cur)
	return cur, err == nil && fi.Mode().IsRegular()
}

func unwrap(err error) error {
	var pe *fs.PathError
	if errors.As(err, &pe) {
		return pe.Err
	}
	return err
}
