//go:build !js

package ipc

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"runtime"
	"strings"
	"testing"
	"time"
)

// fuzzMethods are the request methods FuzzHandler picks from.
var fuzzMethods = []string{"GET", "POST", "PUT", "DELETE", "OPTIONS", "HEAD", "PATCH"}

// FuzzHandler sends arbitrary requests (method, path, query, body, over either transport)
// through the whole handler in front of a scripted Service: no panic; every error answer is
// the protocol's JSON error form; no request over the web transport reaches Submit naming a
// path on disk; no JSON body beyond the limit and no upload beyond its limit is read.
func FuzzHandler(f *testing.F) {
	f.Add(true, byte(1), "/v1/jobs", "", []byte(`{"scan":"/data/sub-01_bold.nii.gz","settings":{"density":0.01}}`))
	f.Add(false, byte(1), "/v1/jobs", "", []byte(`{"scan_upload":"u1","settings":{"measure":"pearson"}}`))
	f.Add(false, byte(1), "/v1/jobs", "", []byte(`{"scan":"/etc/passwd"}`))
	f.Add(false, byte(1), "/v1/uploads", "name=x.nii.gz", bytes.Repeat([]byte("\x1f\x8b"), 100))
	f.Add(true, byte(0), "/v1/jobs/j1/volumes/degree", "", []byte(nil))
	f.Add(true, byte(0), "/v1/jobs/j1/seed", "voxel=1,2,3", []byte(nil))
	f.Add(true, byte(0), "/v1/jobs/j1/files/../../etc/passwd", "", []byte(nil))
	f.Add(true, byte(0), "/v1/jobs/j1/events", "", []byte(nil))
	f.Add(false, byte(1), "/v1/jobs/j1/cancel", "", []byte(`{}`))
	f.Add(true, byte(1), "/v1/jobs", "", []byte(`{"scan":"a"} {"scan":"b"}`))
	svc := newScripted()
	const maxBody, maxUpload = 4 << 10, 8 << 10
	h := NewHandler(svc, HandlerOptions{Token: "tok", Logger: quietLogger(), MaxBodyBytes: maxBody, MaxUploadBytes: maxUpload, WriteTimeout: time.Second})
	f.Fuzz(func(t *testing.T, unix bool, method byte, path, query string, body []byte) {
		tr := TransportWeb
		if unix {
			tr = TransportUnix
		}
		ctx, cancel := context.WithTimeout(ContextWithTransport(context.Background(), tr), 50*time.Millisecond)
		defer cancel()
		r := &http.Request{
			Method: fuzzMethods[int(method)%len(fuzzMethods)], URL: &url.URL{Path: path, RawQuery: query},
			Proto: "HTTP/1.1", ProtoMajor: 1, ProtoMinor: 1, Host: "127.0.0.1",
			Header: http.Header{"Authorization": {"Bearer tok"}}, Body: io.NopCloser(bytes.NewReader(body)), ContentLength: int64(len(body)),
		}
		r = r.WithContext(ctx)
		before := len(svc.Calls())
		w := httptest.NewRecorder()
		h.ServeHTTP(w, r)
		if w.Code >= 400 && r.Method != "HEAD" {
			var e struct {
				Error struct{ Code, Message string }
			}
			if err := json.Unmarshal(w.Body.Bytes(), &e); err != nil || e.Error.Code == "" {
				t.Fatalf("%s %s: status %d without the protocol's error form: %q", r.Method, path, w.Code, w.Body.String())
			}
		}
		for _, c := range svc.Calls()[before:] {
			if strings.HasPrefix(c, "web Submit scan=") && !strings.HasPrefix(c, `web Submit scan=""`) {
				t.Fatalf("web transport reached the service with a path: %s", c)
			}
		}
		for _, n := range svc.Uploaded() {
			if n > maxUpload {
				t.Fatalf("upload read %d bytes, limit %d", n, maxUpload)
			}
		}
	})
}

// FuzzReadVolume decodes arbitrary bytes as a volume body (what the app reads from the
// helper): no panic, no allocation from a lying header beyond the bytes that arrive, and a
// volume it accepts has one value per voxel and survives a round trip.
func FuzzReadVolume(f *testing.F) {
	var buf bytes.Buffer
	WriteVolume(&buf, &Volume{Header: VolumeHeader{Name: "degree", Dims: [3]int{2, 2, 1}}, Data: []float32{1, 2, 3, 4}})
	f.Add(buf.Bytes())
	f.Add([]byte("HSVOL1\n\x00\x20\x00\x00\x00{\"name\":\"x\",\"dims\":[1024,1024,256]}"))
	f.Add([]byte("HSVOL1\n\x00\xff\xff\xff\xff"))
	f.Fuzz(func(t *testing.T, b []byte) {
		v, err := ReadVolume(bytes.NewReader(b))
		if err != nil {
			return
		}
		if len(v.Data) != v.Header.Voxels() || 4*len(v.Data) > len(b) {
			t.Fatalf("%d values for %v from %d bytes", len(v.Data), v.Header.Dims, len(b))
		}
		var out bytes.Buffer
		if err := WriteVolume(&out, v); err != nil {
			t.Fatalf("accepted volume does not write back: %v", err)
		}
		w, err := ReadVolume(&out)
		if err != nil || len(w.Data) != len(v.Data) {
			t.Fatalf("round trip: %v", err)
		}
	})
}

// FuzzNames checks the validators of names that reach paths: a bundle file name or path
// segment they accept has no traversal, and a voxel they parse formats back the same.
func FuzzNames(f *testing.F) {
	for _, s := range []string{"degree.nii.gz", "maps/degree.nii.gz", "../x", "a/../../b", "/etc/passwd", "x\x00y", "1,2,3", "-1,2,3", "1,2", "１,2,3"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		if ValidBundleName(s) == nil {
			if strings.HasPrefix(s, "/") || strings.Contains(s, "\\") || strings.ContainsRune(s, 0) {
				t.Fatalf("bundle name %q accepted", s)
			}
			for _, seg := range strings.Split(s, "/") {
				if seg == ".." || seg == "." || seg == "" {
					t.Fatalf("bundle name %q accepted with segment %q", s, seg)
				}
			}
		}
		if ValidSegment("id", s) == nil && (strings.ContainsAny(s, "/\\\x00") || s == ".." || s == ".") {
			t.Fatalf("segment %q accepted", s)
		}
		if v, err := ParseVoxel(s); err == nil {
			if w, err := ParseVoxel(FormatVoxel(v)); err != nil || w != v {
				t.Fatalf("voxel %q → %v → %q → %v (%v)", s, v, FormatVoxel(v), w, err)
			}
		}
	})
}

// TestReadVolumeLyingHeader is the regression case of what writing FuzzReadVolume showed: a
// 12-byte preamble and a header claiming 1024×1024×256 voxels with no data made ReadVolume
// allocate 1 GiB before reading a value. It must fail as truncated having allocated little.
func TestReadVolumeLyingHeader(t *testing.T) {
	hdr := `{"name":"x","dims":[1024,1024,256]}`
	body := append([]byte("HSVOL1\n\x00"), byte(len(hdr)), 0, 0, 0)
	body = append(body, hdr...)
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	_, err := ReadVolume(bytes.NewReader(body))
	runtime.ReadMemStats(&after)
	if err == nil || !strings.Contains(err.Error(), "truncated data") {
		t.Fatalf("err = %v, want a truncation", err)
	}
	if grew := after.TotalAlloc - before.TotalAlloc; grew > 16<<20 {
		t.Fatalf("allocated %d MiB for a body of %d bytes", grew>>20, len(body))
	}
}
