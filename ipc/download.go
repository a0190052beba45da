package ipc

import (
	"archive/zip"
	"context"
	"fmt"
	"io"
	"mime"
	"net/http"
	"net/url"
	"path"
	"strconv"
	"strings"
)

// Downloads of a finished job for the browser app, whose web driver has no save dialog: the
// page opens these URLs (a link, or the app's OpenURL) and the browser saves the answer as a
// file. They pass the guard like every API request — the page's own requests carry the token
// cookie; without it, or from another site, they are refused — and they are GETs, so a
// navigation from the page's link works.

// DownloadBundlePath and DownloadReportPath are the download URLs' paths (under Prefix) for
// job id: the whole results bundle as one .zip, and the clinician's PDF report.
func DownloadBundlePath(id string) string { return Prefix + "/jobs/" + id + "/bundle.zip" }
func DownloadReportPath(id string) string { return Prefix + "/jobs/" + id + "/report.pdf" }

// DownloadFilePath is the download URL's path of one bundle file (the files endpoint answers
// with Content-Disposition: attachment).
func DownloadFilePath(id, name string) string {
	parts := strings.Split(name, "/")
	for i, p := range parts {
		parts[i] = url.PathEscape(p)
	}
	return Prefix + "/jobs/" + id + "/files/" + strings.Join(parts, "/")
}

// ReportFunc builds the PDF report of finished job id from what svc serves (set by the
// helper's serve command from app/report, which ipc cannot import).
type ReportFunc func(ctx context.Context, svc Service, id string) ([]byte, error)

// finished returns the job, refusing one whose bundle is not complete.
func (h *handler) finished(ctx context.Context, id string) (Job, error) {
	j, err := h.svc.Job(ctx, id)
	if err != nil {
		return j, err
	}
	if j.State != JobDone {
		return j, Errorf(CodeConflict, "job %s is %s: only a finished job's results can be downloaded", id, j.State)
	}
	return j, nil
}

// downloadName is a file name for job j's download: the scan's name without its extension,
// then suffix; characters a file name should not hold become '_'.
func downloadName(j Job, suffix string) string {
	base := path.Base(j.Name)
	for _, ext := range []string{".nii.gz", ".nii", ".zip", ".gz"} {
		if b, ok := strings.CutSuffix(base, ext); ok {
			base = b
			break
		}
	}
	base = strings.Map(func(r rune) rune {
		if r < 0x20 || strings.ContainsRune(`/\:*?"<>|`, r) {
			return '_'
		}
		return r
	}, base)
	if base == "" || base == "." || base == ".." {
		base = "job-" + j.ID
	}
	return base + suffix
}

func attachment(w http.ResponseWriter, contentType, name string) {
	hd := w.Header()
	hd.Set("Content-Type", contentType)
	hd.Set("X-Content-Type-Options", "nosniff")
	hd.Set("Cache-Control", "no-store")
	hd.Set("Content-Disposition", mime.FormatMediaType("attachment", map[string]string{"filename": name}))
}

// bundleZip streams every file of a finished job's bundle as one .zip (already compressed
// files — .gz, .png, .npz, .pdf — stored, the rest deflated), named after the scan.
func (h *handler) bundleZip(w http.ResponseWriter, r *http.Request, in input) (any, error) {
	j, err := h.finished(r.Context(), in.id)
	if err != nil {
		return nil, err
	}
	files, err := h.svc.Files(r.Context(), in.id)
	if err != nil {
		return nil, err
	}
	if len(files) == 0 {
		return nil, Errorf(CodeNotFound, "job %s has no result files", in.id)
	}
	folder := downloadName(j, "_hubscope")
	attachment(w, "application/zip", folder+".zip")
	w.WriteHeader(http.StatusOK)
	// From here on a failure (a file gone, a client gone) can only cut the archive short: the
	// zip then lacks its central directory, which every unzip tool reports.
	zw := zip.NewWriter(w)
	for _, f := range files {
		if err := ValidBundleName(f.Name); err != nil {
			continue // never a name that would unpack outside the folder
		}
		if err := copyInto(r.Context(), h.svc, zw, in.id, folder, f.Name); err != nil {
			h.opts.Logger.Warn("bundle.zip cut short", "job", in.id, "file", f.Name, "error", err)
			return nil, nil
		}
	}
	zw.Close()
	return nil, nil
}

func copyInto(ctx context.Context, svc Service, zw *zip.Writer, id, folder, name string) error {
	rc, _, err := svc.OpenFile(ctx, id, name)
	if err != nil {
		return err
	}
	defer rc.Close()
	method := zip.Deflate
	for _, ext := range []string{".gz", ".png", ".npz", ".pdf", ".zip"} {
		if strings.HasSuffix(name, ext) {
			method = zip.Store
		}
	}
	out, err := zw.CreateHeader(&zip.FileHeader{Name: folder + "/" + name, Method: method})
	if err != nil {
		return err
	}
	_, err = io.Copy(out, rc)
	return err
}

// reportPDF answers the PDF report of a finished job, built by the handler's Report.
func (h *handler) reportPDF(w http.ResponseWriter, r *http.Request, in input) (any, error) {
	if h.opts.Report == nil {
		return nil, Errorf(CodeNotFound, "this helper builds no PDF reports")
	}
	j, err := h.finished(r.Context(), in.id)
	if err != nil {
		return nil, err
	}
	b, err := h.opts.Report(r.Context(), h.svc, in.id)
	if err != nil {
		return nil, fmt.Errorf("the report of job %s: %w", in.id, err)
	}
	attachment(w, "application/pdf", downloadName(j, "_report.pdf"))
	w.Header().Set("Content-Length", strconv.Itoa(len(b)))
	w.WriteHeader(http.StatusOK)
	w.Write(b)
	return nil, nil
}
