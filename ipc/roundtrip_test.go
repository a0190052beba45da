//go:build !js

package ipc

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"github.com/hubscope/hubscope/ipc/schema"
	"github.com/hubscope/hubscope/ipc/settings"
	"io"
	"log/slog"
	"math"
	"net/http"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"
)

// logBuffer collects log lines for the tests that read them.
type logBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (l *logBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *logBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}

func quietLogger() *slog.Logger { return slog.New(slog.NewTextHandler(io.Discard, nil)) }

// startServer serves svc on a fresh socket (and the web transport when opts.Web is set) and
// shuts it down when the test ends.
func startServer(t *testing.T, svc Service, opts ServerOptions) *Server {
	t.Helper()
	if opts.Socket == "" && !opts.NoSocket {
		opts.Socket = filepath.Join(t.TempDir(), "run", "helper.sock")
	}
	if opts.Handler.Logger == nil {
		opts.Handler.Logger = quietLogger()
	}
	s, err := NewServer(svc, opts)
	if err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- s.Serve() }()
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		if err := s.Shutdown(ctx); err != nil {
			t.Errorf("shutdown: %v", err)
		}
		if err := <-done; err != nil {
			t.Errorf("serve: %v", err)
		}
	})
	return s
}

// wantError checks that err is an *Error with the status and code.
func wantError(t *testing.T, what string, err error, status int, code string) {
	t.Helper()
	var e *Error
	if !errors.As(err, &e) {
		t.Fatalf("%s: error %v (%T), want *ipc.Error %d %s", what, err, err, status, code)
	}
	if e.Status != status || e.Code != code {
		t.Fatalf("%s: error %d %s %q, want %d %s", what, e.Status, e.Code, e.Message, status, code)
	}
}

func sameJSON(t *testing.T, what string, got, want any) {
	t.Helper()
	g, _ := json.Marshal(got)
	w, _ := json.Marshal(want)
	if !bytes.Equal(g, w) {
		t.Fatalf("%s:\n got %s\nwant %s", what, g, w)
	}
}

func TestRoundTrip(t *testing.T) {
	svc := newScripted()
	srv := startServer(t, svc, ServerOptions{Web: "127.0.0.1:0"})
	clients := map[Transport]*Client{
		TransportUnix: NewUnixClient(srv.SocketPath()),
		TransportWeb:  NewWebClient(srv.WebURL(), srv.Token()),
	}
	for tr, c := range clients {
		t.Run(string(tr), func(t *testing.T) {
			defer c.Close()
			roundTrip(t, svc, c, tr)
		})
	}
}

func roundTrip(t *testing.T, svc *scripted, c *Client, tr Transport) {
	ctx := context.Background()
	info, err := c.Info(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if info.Transport != string(tr) || info.App != schema.AppName || info.API != Prefix || info.CPU != "scripted CPU" || info.MaxUploadBytes != DefaultMaxUploadBytes {
		t.Fatalf("info %+v", info)
	}
	if !slices.Contains(svc.Calls(), string(tr)+" Info") {
		t.Fatalf("the Service did not see Info over %s: %q", tr, svc.Calls())
	}

	body := bytes.Repeat([]byte("0123456789"), 1000)
	up, err := c.Upload(ctx, "scan.nii.gz", bytes.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	if up.Size != int64(len(body)) || up.Name != "scan.nii.gz" {
		t.Fatalf("upload %+v", up)
	}

	set := settings.Defaults()
	set.Measure, set.Density, set.DFCWindow, set.DFCStep = "spearman", 0.02, 30, 5
	req := JobRequest{ScanUpload: "u1", Name: "sub-01", Settings: &set}
	if tr == TransportUnix {
		req = JobRequest{Scan: "/data/sub-01_bold.nii.gz", Mask: "/data/mask.nii.gz", Name: "sub-01", Settings: req.Settings}
	}
	job, err := c.Submit(ctx, req)
	if err != nil {
		t.Fatal(err)
	}
	if job.ID != "j3" || job.State != JobQueued || job.Settings != set || job.Name != "sub-01" {
		t.Fatalf("submitted %+v", job)
	}
	_, err = c.Submit(ctx, JobRequest{ScanUpload: "busy"})
	wantError(t, "submit busy", err, http.StatusConflict, CodeConflict)
	_, err = c.Submit(ctx, JobRequest{})
	wantError(t, "submit nothing", err, http.StatusBadRequest, CodeBadRequest)

	jobs, err := c.Jobs(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if len(jobs) != 2 || jobs[0].ID != "j2" || jobs[1].ID != "j1" {
		t.Fatalf("jobs %+v", jobs)
	}
	j1, err := c.Job(ctx, "j1")
	if err != nil {
		t.Fatal(err)
	}
	sameJSON(t, "job j1", j1, svc.jobs["j1"])
	_, err = c.Job(ctx, "nope")
	wantError(t, "job nope", err, http.StatusNotFound, CodeNotFound)

	ch, err := c.Events(ctx, "j1")
	if err != nil {
		t.Fatal(err)
	}
	var evs []Event
	for ev := range ch {
		evs = append(evs, ev)
	}
	// A reader that keeps up may still see progress coalesced, never the message or the end.
	if n := len(evs); n < 2 || evs[n-1].Job.State != JobDone || evs[n-1].Seq != 5 {
		t.Fatalf("events %+v", evs)
	}
	if !slices.ContainsFunc(evs, func(e Event) bool { return e.Message == "dropped 12 zero-variance voxels" }) {
		t.Fatalf("the event with a message was lost: %+v", evs)
	}
	for k := 1; k < len(evs); k++ {
		if evs[k].Seq <= evs[k-1].Seq {
			t.Fatalf("events out of order: %+v", evs)
		}
	}
	_, err = c.Events(ctx, "nope")
	wantError(t, "events nope", err, http.StatusNotFound, CodeNotFound)

	cj, err := c.Cancel(ctx, "j1")
	if err != nil || cj.State != JobCancelled {
		t.Fatalf("cancel j1: %+v, %v", cj, err)
	}
	_, err = c.Cancel(ctx, "j2")
	wantError(t, "cancel j2", err, http.StatusConflict, CodeConflict)

	sum, err := c.Summary(ctx, "j2")
	if err != nil {
		t.Fatal(err)
	}
	want, _ := svc.Summary(ctx, "j2")
	sameJSON(t, "summary", sum, want)

	vol, err := c.Volume(ctx, "j2", "degree")
	if err != nil {
		t.Fatal(err)
	}
	wv := testVolume("degree")
	if vol.Header.Dims != wv.Header.Dims || vol.Header.Affine != wv.Header.Affine || len(vol.Data) != len(wv.Data) {
		t.Fatalf("volume header %+v", vol.Header)
	}
	for i := range wv.Data {
		if math.Float32bits(vol.Data[i]) != math.Float32bits(wv.Data[i]) {
			t.Fatalf("volume value %d: %v, want %v", i, vol.Data[i], wv.Data[i])
		}
	}
	_, err = c.Volume(ctx, "j2", "nope")
	wantError(t, "volume nope", err, http.StatusNotFound, CodeNotFound)

	seed, err := c.SeedMap(ctx, "j2", [3]int{1, 2, 0})
	if err != nil {
		t.Fatal(err)
	}
	if seed.Header.Seed == nil || *seed.Header.Seed != [3]int{1, 2, 0} || seed.Header.Millis != 4.5 {
		t.Fatalf("seed map header %+v", seed.Header)
	}
	ser, err := c.Series(ctx, "j2", [3]int{3, 0, 1})
	if err != nil {
		t.Fatal(err)
	}
	if ser.Voxel != [3]int{3, 0, 1} || len(ser.Values) != 3 || ser.Values[1] != -0.5 {
		t.Fatalf("series %+v", ser)
	}
	_, err = c.Series(ctx, "nope", [3]int{0, 0, 0})
	wantError(t, "series nope", err, http.StatusNotFound, CodeNotFound)

	files, err := c.Files(ctx, "j2")
	if err != nil {
		t.Fatal(err)
	}
	if len(files) != 2 || files[0].Name != "maps/degree.nii.gz" {
		t.Fatalf("files %+v", files)
	}
	for _, name := range []string{"maps/degree.nii.gz", "metrics.json"} {
		rc, fi, err := c.OpenFile(ctx, "j2", name)
		if err != nil {
			t.Fatalf("open %s: %v", name, err)
		}
		b, err := io.ReadAll(rc)
		rc.Close()
		if err != nil || string(b) != svc.files[name] || fi.Size != int64(len(b)) || fi.Name != name {
			t.Fatalf("file %s: %q (%+v), %v", name, b, fi, err)
		}
	}
	_, _, err = c.OpenFile(ctx, "j2", "nope.tsv")
	wantError(t, "open nope", err, http.StatusNotFound, CodeNotFound)

	calls := strings.Join(svc.Calls(), "\n")
	for _, want := range []string{
		string(tr) + " Upload scan.nii.gz 10000",
		string(tr) + " SeedMap j2 [1 2 0]",
		string(tr) + " OpenFile j2 maps/degree.nii.gz",
	} {
		if !strings.Contains(calls, want) {
			t.Errorf("the Service did not see %q; calls:\n%s", want, calls)
		}
	}
}

// The web transport may not name files on disk: the Service never sees such a request.
func TestWebRefusesPaths(t *testing.T) {
	svc := newScripted()
	srv := startServer(t, svc, ServerOptions{Web: "127.0.0.1:0"})
	c := NewWebClient(srv.WebURL(), srv.Token())
	defer c.Close()
	for _, req := range []JobRequest{{Scan: "/etc/passwd"}, {ScanUpload: "u1", Mask: "/home/x/mask.nii"}} {
		_, err := c.Submit(context.Background(), req)
		wantError(t, "submit "+req.Scan+req.Mask, err, http.StatusForbidden, CodeForbidden)
	}
	// An atlas file (or its names) in the settings is a path too; the embedded "aal" is not.
	for _, set := range []settings.Settings{
		{Regions: settings.Regions{Nodes: settings.NodesRegions, Atlas: "/home/x/atlas.nii.gz"}},
		{Regions: settings.Regions{Atlas: settings.AtlasAAL, AtlasNames: "/home/x/names.tsv"}},
	} {
		full := settings.Defaults()
		full.Regions = set.Regions
		_, err := c.Submit(context.Background(), JobRequest{ScanUpload: "u1", Settings: &full})
		wantError(t, "submit atlas "+set.Atlas+set.AtlasNames, err, http.StatusForbidden, CodeForbidden)
	}
	if svc.called("Submit") {
		t.Fatalf("the Service was called: %q", svc.Calls())
	}
	// Over the socket the same request reaches the Service.
	u := NewUnixClient(srv.SocketPath())
	defer u.Close()
	if _, err := u.Submit(context.Background(), JobRequest{Scan: "/data/scan.nii"}); err != nil {
		t.Fatal(err)
	}
	if !slices.Contains(svc.Calls(), `unix Submit scan="/data/scan.nii" upload=""`) {
		t.Fatalf("calls %q", svc.Calls())
	}
}

func slogTo(w io.Writer) *slog.Logger { return slog.New(slog.NewTextHandler(w, nil)) }
