package daemon

import (
	"bytes"
	"compress/gzip"
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/hubscope/hubscope/helper/nifti"
	"github.com/hubscope/hubscope/ipc"
)

// uploadID is the form of upload IDs (128 random bits).
var uploadID = regexp.MustCompile(`^[0-9a-f]{32}$`)

// probeBytes is how much of an upload is read before its NIfTI header is checked: the header
// (348 or 540 bytes) plus room for extensions and gzip framing.
const probeBytes = 64 << 10

// uploadMeta is uploads/ID.json.
type uploadMeta struct {
	Name string    `json:"name"`
	Ext  string    `json:"ext"`
	Size int64     `json:"size"`
	Time time.Time `json:"time"`
}

// uploadExt returns the extension of an uploadable file name (NIfTI, a .zip of DICOM, or a
// .tsv confounds table), or "".
func uploadExt(name string) string {
	lower := strings.ToLower(name)
	for _, ext := range []string{".nii.gz", ".nii", ".zip", ".tsv"} {
		if strings.HasSuffix(lower, ext) {
			return ext
		}
	}
	return ""
}

// Upload streams a scan or mask from the browser build into the results directory's uploads/,
// at most MaxUpload bytes. Its NIfTI header is checked as soon as the first bytes arrive, so a
// wrong file is refused, by its name, without waiting for the rest of it.
func (d *Daemon) Upload(ctx context.Context, name string, body io.Reader) (ipc.Upload, error) {
	if name == "" || name != filepath.Base(name) || strings.ContainsAny(name, "/\\\x00") || name == "." || name == ".." {
		return ipc.Upload{}, ipc.Errorf(ipc.CodeBadRequest, "upload name %q: want a file's base name", name)
	}
	ext := uploadExt(name)
	if ext == "" {
		return ipc.Upload{}, ipc.Errorf(ipc.CodeBadRequest, "upload %s: not a NIfTI file name (.nii or .nii.gz)", name)
	}
	var b [16]byte
	rand.Read(b[:])
	id := hex.EncodeToString(b[:])
	final := filepath.Join(d.uploads, id+ext)
	part := final + ".partial"
	f, err := os.OpenFile(part, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
	if err != nil {
		return ipc.Upload{}, fmt.Errorf("upload: %w", err)
	}
	ok := false
	defer func() {
		if !ok {
			f.Close()
			os.Remove(part)
		}
	}()

	limited := &io.LimitedReader{R: body, N: d.opt.MaxUpload + 1}
	head := make([]byte, probeBytes)
	n, err := io.ReadFull(limited, head)
	if err != nil && !errors.Is(err, io.ErrUnexpectedEOF) && !errors.Is(err, io.EOF) {
		return ipc.Upload{}, ipc.Errorf(ipc.CodeBadRequest, "upload %s: reading the body: %v", name, err)
	}
	head = head[:n]
	if int64(n) > d.opt.MaxUpload {
		return ipc.Upload{}, ipc.Errorf(ipc.CodeTooLarge, "upload %s exceeds the limit of %d bytes", name, d.opt.MaxUpload)
	}
	if ext == ".tsv" {
		// A confounds table (fMRIPrep's TSV): text with a tab-separated header line; its
		// columns are read, and checked against the scan, when the job runs.
		line, _, _ := bytes.Cut(head, []byte("\n"))
		if bytes.IndexByte(head, 0) >= 0 || !utf8.Valid(line) || !bytes.Contains(line, []byte("\t")) {
			return ipc.Upload{}, ipc.Errorf(ipc.CodeBadRequest, "upload %s: not a tab-separated confounds table (its first line is no tab-separated header)", name)
		}
	} else if ext == ".zip" {
		// A DICOM export: read (safely, docs/dicom.md) and listed when the job is submitted.
		if !bytes.HasPrefix(head, []byte("PK\x03\x04")) {
			return ipc.Upload{}, ipc.Errorf(ipc.CodeBadRequest, "upload %s: not a zip archive", name)
		}
	} else if err := d.probeHeader(head, ext); err != nil {
		return ipc.Upload{}, ipc.Errorf(ipc.CodeBadRequest, "upload %s: not a valid NIfTI image: %v", name, err)
	}
	if _, err := f.Write(head); err != nil {
		return ipc.Upload{}, fmt.Errorf("upload: %w", err)
	}
	rest, err := io.Copy(f, limited)
	size := int64(n) + rest
	if err != nil {
		if ctx.Err() != nil {
			err = ctx.Err()
		}
		return ipc.Upload{}, ipc.Errorf(ipc.CodeBadRequest, "upload %s: the body ended early: %v", name, err)
	}
	if size > d.opt.MaxUpload {
		return ipc.Upload{}, ipc.Errorf(ipc.CodeTooLarge, "upload %s exceeds the limit of %d bytes", name, d.opt.MaxUpload)
	}
	if err := f.Close(); err != nil {
		return ipc.Upload{}, fmt.Errorf("upload: %w", err)
	}
	// The whole file now: sizes, truncation and (for gzip) the stream's checksum are checked
	// when it is opened again at submission.
	meta, _ := json.Marshal(uploadMeta{Name: displayName(name), Ext: ext, Size: size, Time: time.Now().UTC()})
	if err := os.WriteFile(filepath.Join(d.uploads, id+".json"), meta, 0o600); err != nil {
		return ipc.Upload{}, fmt.Errorf("upload: %w", err)
	}
	if err := os.Rename(part, final); err != nil {
		os.Remove(filepath.Join(d.uploads, id+".json"))
		return ipc.Upload{}, fmt.Errorf("upload: %w", err)
	}
	ok = true
	d.log.Printf("upload %s: %d bytes", id, size)
	return ipc.Upload{ID: id, Name: displayName(name), Size: size}, nil
}

// probeHeader checks the NIfTI header at the start of an upload. The reader works on files and
// checks a plain file's length against its header, which the first bytes alone cannot pass,
// so they are written as a small gzip file (whose length is unknown to the reader) inside
// uploads/ and opened: header fields, datatype and sizes are validated, the data are not read.
func (d *Daemon) probeHeader(head []byte, ext string) error {
	probe, err := os.CreateTemp(d.uploads, ".probe-*.nii.gz")
	if err != nil {
		return err
	}
	defer os.Remove(probe.Name())
	if ext == ".nii.gz" {
		if !bytes.HasPrefix(head, []byte{0x1f, 0x8b}) {
			probe.Close()
			return errors.New("the .nii.gz file is not gzip data")
		}
		_, err = probe.Write(head)
	} else {
		zw := gzip.NewWriter(probe)
		if _, err = zw.Write(head); err == nil {
			err = zw.Close()
		}
	}
	if cerr := probe.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return err
	}
	r, err := nifti.Open(probe.Name())
	if err != nil {
		return unwrapFileError(err)
	}
	r.Close()
	return nil
}

// takeUpload moves an upload into a job's input/ directory as input/ROLE.EXT.
func (d *Daemon) takeUpload(id, jobDir, role string) (string, uploadMeta, error) {
	var meta uploadMeta
	if !uploadID.MatchString(id) {
		return "", meta, ipc.Errorf(ipc.CodeBadRequest, "%s_upload %q: no such upload", role, id)
	}
	b, err := os.ReadFile(filepath.Join(d.uploads, id+".json"))
	if err == nil {
		err = json.Unmarshal(b, &meta)
	}
	isNIfTI := meta.Ext == ".nii" || meta.Ext == ".nii.gz"
	if err != nil || (role == "confounds") != (meta.Ext == ".tsv") || (!isNIfTI && meta.Ext != ".tsv" && (meta.Ext != ".zip" || role != "scan")) {
		return "", meta, ipc.Errorf(ipc.CodeBadRequest, "%s_upload %q: no such upload", role, id)
	}
	in := filepath.Join(jobDir, "input")
	if err := os.MkdirAll(in, 0o700); err != nil {
		return "", meta, err
	}
	dst := filepath.Join(in, role+meta.Ext)
	if err := os.Rename(filepath.Join(d.uploads, id+meta.Ext), dst); err != nil {
		return "", meta, ipc.Errorf(ipc.CodeBadRequest, "%s_upload %q: no such upload (already used?)", role, id)
	}
	os.Remove(filepath.Join(d.uploads, id+".json"))
	return dst, meta, nil
}
