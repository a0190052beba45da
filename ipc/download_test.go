//go:build !js

package ipc

import (
	"archive/zip"
	"bytes"
	"context"
	"io"
	"mime"
	"net/http"
	"net/http/cookiejar"
	"sort"
	"strings"
	"testing"
)

// The browser app's downloads: a finished job's bundle as one .zip and its PDF report, as
// attachments, for the page's own requests with the token cookie; refused without it, from
// another site, and for a job that has not finished.
func TestDownloads(t *testing.T) {
	var reported []string
	srv := startServer(t, newScripted(), ServerOptions{NoSocket: true, Web: "127.0.0.1:0", Handler: HandlerOptions{
		Report: func(ctx context.Context, svc Service, id string) ([]byte, error) {
			reported = append(reported, id)
			if _, err := svc.Summary(ctx, id); err != nil {
				return nil, err
			}
			return []byte("%PDF-1.4 report of " + id), nil
		}}})
	// The page's cookie, as a browser gets it from the token URL.
	jar, _ := cookiejar.New(nil)
	resp, err := (&http.Client{Jar: jar}).Get(srv.TokenURL())
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	var cookie *http.Cookie
	for _, c := range resp.Request.Cookies() {
		if strings.HasPrefix(c.Name, tokenCookie) {
			cookie = c
		}
	}
	if cookie == nil {
		t.Fatal("the token URL set no cookie")
	}
	get := func(path string, cookie *http.Cookie, site string) (*http.Response, []byte) {
		req, _ := http.NewRequest("GET", srv.WebURL()+path, nil)
		if cookie != nil {
			req.AddCookie(cookie)
		}
		if site != "" {
			req.Header.Set("Sec-Fetch-Site", site)
		}
		resp, err := http.DefaultTransport.RoundTrip(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		return resp, b
	}
	filename := func(resp *http.Response) string {
		_, p, _ := mime.ParseMediaType(resp.Header.Get("Content-Disposition"))
		return p["filename"]
	}

	resp, b := get(DownloadBundlePath("j2"), cookie, "same-origin")
	if resp.StatusCode != 200 || resp.Header.Get("Content-Type") != "application/zip" || filename(resp) != "sub-02_bold_hubscope.zip" {
		t.Fatalf("bundle.zip: %s, %q, %q", resp.Status, resp.Header.Get("Content-Type"), resp.Header.Get("Content-Disposition"))
	}
	zr, err := zip.NewReader(bytes.NewReader(b), int64(len(b)))
	if err != nil {
		t.Fatalf("bundle.zip is not a zip: %v", err)
	}
	got := map[string]string{}
	var names []string
	for _, f := range zr.File {
		rc, err := f.Open()
		if err != nil {
			t.Fatal(err)
		}
		body, _ := io.ReadAll(rc)
		rc.Close()
		got[f.Name] = string(body)
		names = append(names, f.Name)
		if strings.HasSuffix(f.Name, ".gz") && f.Method != zip.Store {
			t.Errorf("%s deflated again", f.Name)
		}
	}
	sort.Strings(names)
	svc := newScripted()
	if len(names) != 2 || got["sub-02_bold_hubscope/metrics.json"] != svc.files["metrics.json"] ||
		got["sub-02_bold_hubscope/maps/degree.nii.gz"] != svc.files["maps/degree.nii.gz"] {
		t.Fatalf("bundle.zip holds %v", names)
	}

	resp, b = get(DownloadReportPath("j2"), cookie, "")
	if resp.StatusCode != 200 || resp.Header.Get("Content-Type") != "application/pdf" || filename(resp) != "sub-02_bold_report.pdf" ||
		string(b) != "%PDF-1.4 report of j2" || len(reported) != 1 {
		t.Fatalf("report.pdf: %s %q %q (%d reports built)", resp.Status, resp.Header.Get("Content-Disposition"), b, len(reported))
	}
	// One bundle file: the files endpoint's attachment.
	resp, b = get(DownloadFilePath("j2", "maps/degree.nii.gz"), cookie, "same-origin")
	if resp.StatusCode != 200 || filename(resp) != "degree.nii.gz" || string(b) != svc.files["maps/degree.nii.gz"] {
		t.Fatalf("one file: %s %q", resp.Status, resp.Header.Get("Content-Disposition"))
	}

	for _, c := range []struct {
		name, path string
		cookie     *http.Cookie
		site       string
		want       int
	}{
		{"zip without the cookie", DownloadBundlePath("j2"), nil, "same-origin", 401},
		{"report without the cookie", DownloadReportPath("j2"), nil, "", 401},
		{"zip with a wrong cookie", DownloadBundlePath("j2"), &http.Cookie{Name: cookie.Name, Value: "guess"}, "same-origin", 401},
		{"zip from another site with the cookie", DownloadBundlePath("j2"), cookie, "same-site", 403},
		{"report from another site with the cookie", DownloadReportPath("j2"), cookie, "cross-site", 403},
		{"zip of a running job", DownloadBundlePath("j1"), cookie, "same-origin", 409},
		{"report of a running job", DownloadReportPath("j1"), cookie, "same-origin", 409},
		{"zip of no job", DownloadBundlePath("nope"), cookie, "same-origin", 404},
	} {
		if resp, _ := get(c.path, c.cookie, c.site); resp.StatusCode != c.want {
			t.Errorf("%s: %s, want %d", c.name, resp.Status, c.want)
		}
	}
	if len(reported) != 1 {
		t.Errorf("%d reports built; refused requests must build none", len(reported))
	}

	// A helper without a report builder says so; its zip still works.
	plain := startServer(t, newScripted(), ServerOptions{NoSocket: true, Web: "127.0.0.1:0"})
	req, _ := http.NewRequest("GET", plain.WebURL()+DownloadReportPath("j2"), nil)
	req.Header.Set("Authorization", "Bearer "+plain.Token())
	resp, err = http.DefaultTransport.RoundTrip(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != 404 {
		t.Errorf("report.pdf without a builder: %s, want 404", resp.Status)
	}
}
