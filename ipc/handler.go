package ipc

import (
	"context"
	"crypto/sha256"
	"crypto/subtle"
	"encoding/json"
	"errors"
	"fmt"
	"github.com/hubscope/hubscope/ipc/schema"
	"github.com/hubscope/hubscope/ipc/settings"
	"io"
	"io/fs"
	"log/slog"
	"mime"
	"net"
	"net/http"
	"net/url"
	"os"
	"path"
	"strconv"
	"strings"
	"time"
)

// Limits the handler applies unless HandlerOptions say otherwise.
const (
	// DefaultMaxBodyBytes bounds JSON request bodies (a JobRequest is a few hundred bytes).
	DefaultMaxBodyBytes = 1 << 20
	// DefaultMaxUploadBytes bounds one uploaded scan: a 4D fMRI series at 2 mm with 1,200
	// volumes of float32 is about 4.4 GB uncompressed.
	DefaultMaxUploadBytes = 8 << 30
	// DefaultWriteTimeout is how long one write to a client may block before the client is
	// dropped (a stream reader that stopped reading, a download nobody collects).
	DefaultWriteTimeout = 5 * time.Second
	// DefaultReadTimeout is how long one read of a request body may wait for bytes.
	DefaultReadTimeout = 30 * time.Second
	// DefaultMinUploadRate is the slowest average rate, in bytes per second, an upload may
	// keep up beyond its grace time (a loopback upload runs at hundreds of MB/s).
	DefaultMinUploadRate = 1 << 20
	// DefaultUploadGrace is the time every upload has on top of what its size needs at
	// MinUploadRate: a small scan sent by a slow browser is not cut off.
	DefaultUploadGrace = 3 * time.Minute
)

// EventContentType is the media type of an event stream: one JSON Event per line.
const EventContentType = "application/x-ndjson"

// tokenCookie (with the helper's port: cookieName) carries the web token for the browser app
// after the page was opened with ?token=: its files and, from the page's own origin, the API.
const tokenCookie = "hubscope_token"

// HandlerOptions configure NewHandler. The zero value is usable: limits take their defaults,
// logs go to slog.Default(), and the web transport refuses every request (no token).
type HandlerOptions struct {
	// Logger receives one line per request: method, route pattern, status, duration.
	Logger *slog.Logger
	// Verbose adds the request URI (with its query) and error messages to the log lines; off
	// by default because they can hold scan names.
	Verbose bool
	// Token is the bearer token the web transport requires (Server draws it at random).
	Token string
	// MaxBodyBytes bounds JSON request bodies; 0 = DefaultMaxBodyBytes.
	MaxBodyBytes int64
	// MaxUploadBytes bounds an upload; 0 = DefaultMaxUploadBytes.
	MaxUploadBytes int64
	// WriteTimeout bounds each write to a client; 0 = DefaultWriteTimeout.
	WriteTimeout time.Duration
	// ReadTimeout bounds each wait for request-body bytes; 0 = DefaultReadTimeout.
	ReadTimeout time.Duration
	// MinUploadRate (bytes per second) and UploadGrace bound an upload as a whole: it must be
	// complete within UploadGrace plus one second per MinUploadRate bytes received, so a
	// sender that trickles a byte just inside every ReadTimeout is still dropped (408).
	// 0 = DefaultMinUploadRate, DefaultUploadGrace.
	MinUploadRate int64
	UploadGrace   time.Duration
	// WebRoot, when set, holds the browser build's files (index.html, wasm_exec.js, the
	// wasm binary), served at / on GET.
	WebRoot fs.FS
	// Report, when set, builds a finished job's PDF report for GET /jobs/{id}/report.pdf
	// (download.go); nil: that route answers 404.
	Report ReportFunc
}

func (o HandlerOptions) withDefaults() HandlerOptions {
	if o.Logger == nil {
		o.Logger = slog.Default()
	}
	if o.MaxBodyBytes <= 0 {
		o.MaxBodyBytes = DefaultMaxBodyBytes
	}
	if o.MaxUploadBytes <= 0 {
		o.MaxUploadBytes = DefaultMaxUploadBytes
	}
	if o.WriteTimeout <= 0 {
		o.WriteTimeout = DefaultWriteTimeout
	}
	if o.ReadTimeout <= 0 {
		o.ReadTimeout = DefaultReadTimeout
	}
	if o.MinUploadRate <= 0 {
		o.MinUploadRate = DefaultMinUploadRate
	}
	if o.UploadGrace <= 0 {
		o.UploadGrace = DefaultUploadGrace
	}
	return o
}

type handler struct {
	svc      Service
	opts     HandlerOptions
	mux      *http.ServeMux
	tokenSum [sha256.Size]byte
	static   http.Handler
	parts    parts // uploads in parts (parts.go)
}

// NewHandler routes the endpoints listed in the package comment to svc, behind the checks
// every request passes: a loopback Host (DNS-rebinding guard), a clean path, the Origin rule
// of its transport, the bearer token on the web transport, and the size limits. The
// transport comes from the request's context (ContextWithTransport; Server sets it per
// connection); a request without one is held to the web transport's rules.
func NewHandler(svc Service, opts HandlerOptions) http.Handler {
	h := &handler{svc: svc, opts: opts.withDefaults(), mux: http.NewServeMux()}
	h.tokenSum = sha256.Sum256([]byte(h.opts.Token))
	if h.opts.WebRoot != nil {
		h.static = http.FileServerFS(h.opts.WebRoot)
	}
	// Every route and what it checks beyond the guard: each input it takes is validated
	// before the endpoint runs, so an endpoint only sees checked values.
	routes := []route{
		{"GET", "/info", 0, http.StatusOK, h.info},
		{"POST", "/uploads", uploadName, http.StatusCreated, h.upload},
		{"POST", "/uploads/parts", uploadName, http.StatusCreated, h.openParts},
		{"POST", "/uploads/parts/{id}", jobID, 0, h.uploadPart},
		{"POST", "/jobs", 0, http.StatusAccepted, h.submit},
		{"GET", "/jobs", 0, http.StatusOK, h.jobs},
		{"GET", "/folders", 0, http.StatusOK, h.folders},
		{"GET", "/folders/table", 0, 0, h.folderTable},
		{"GET", "/jobs/{id}", jobID, http.StatusOK, byID(h.svc.Job)},
		{"GET", "/jobs/{id}/events", jobID, 0, h.events},
		{"POST", "/jobs/{id}/cancel", jobID | noBody, http.StatusOK, byID(h.svc.Cancel)},
		{"GET", "/jobs/{id}/summary", jobID, http.StatusOK, byID(h.svc.Summary)},
		{"GET", "/jobs/{id}/volumes/{name}", jobID | volumeName, 0, h.volume},
		{"GET", "/jobs/{id}/seed", jobID | voxelQuery, 0, h.seed},
		{"GET", "/jobs/{id}/series", jobID | voxelQuery, http.StatusOK, h.series},
		{"GET", "/jobs/{id}/files", jobID, http.StatusOK, h.files},
		{"GET", "/jobs/{id}/files/{name...}", jobID | bundleName, 0, h.file},
		{"GET", "/jobs/{id}/bundle.zip", jobID, 0, h.bundleZip},
		{"GET", "/jobs/{id}/report.pdf", jobID, 0, h.reportPDF},
		{"POST", "/dicom/series", localOnly, http.StatusOK, h.dicomSeries},
	}
	seen := map[string]bool{}
	for _, rt := range routes {
		h.mux.HandleFunc(rt.method+" "+Prefix+rt.path, h.serve(rt))
		// The same path without a method catches the other methods, so that they get a 405
		// in the protocol's error form rather than the mux's plain text.
		if p := Prefix + rt.path; !seen[p] {
			seen[p] = true
			h.mux.HandleFunc(p, h.methodNotAllowed)
		}
	}
	h.mux.HandleFunc("/", h.root)
	return h
}

// A route is one endpoint of the API: its method and path, the inputs it takes (each
// checked by serve before the endpoint runs), the status of its JSON answer (0: the endpoint
// writes its own answer: a stream, a volume, a file) and the endpoint.
type route struct {
	method, path string
	takes        inputs
	status       int
	fn           endpoint
}

// An endpoint serves one route with its checked inputs. A non-nil value is sent as JSON with
// the route's status; an error in the protocol's error form.
type endpoint func(w http.ResponseWriter, r *http.Request, in input) (any, error)

// inputs says which request inputs a route takes; serve checks them in this order.
type inputs uint8

const (
	jobID      inputs = 1 << iota // path {id}: one safe path segment (ValidSegment)
	volumeName                    // path {name}: one safe path segment
	bundleName                    // path {name...}: a relative name inside the bundle (ValidBundleName)
	voxelQuery                    // ?voxel=i,j,k
	uploadName                    // ?name=: one safe path segment
	noBody                        // no request body (one is read within the JSON limit and refused)
	localOnly                     // refused on the web transport: the request names files on the helper's disk
)

// input holds a request's checked inputs.
type input struct {
	id, name string
	voxel    [3]int
}

// serve checks the route's inputs, runs its endpoint and writes its answer or its error.
func (h *handler) serve(rt route) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		v, err := h.checked(rt, w, r)
		if err != nil {
			h.fail(w, r, err)
			return
		}
		if rt.status != 0 {
			writeJSON(w, rt.status, v)
		}
	}
}

func (h *handler) checked(rt route, w http.ResponseWriter, r *http.Request) (any, error) {
	var in input
	if rt.takes&localOnly != 0 && TransportFrom(r.Context()) == TransportWeb {
		return nil, Errorf(CodeForbidden, "%s %s names files on the helper's disk, which the web transport cannot reach; upload them (a DICOM folder as a .zip) and submit the upload ID", rt.method, Prefix+rt.path)
	}
	if rt.takes&jobID != 0 {
		in.id = r.PathValue("id")
		if err := ValidSegment("job ID", in.id); err != nil {
			return nil, Errorf(CodeBadRequest, "%v", err)
		}
	}
	if rt.takes&volumeName != 0 {
		in.name = r.PathValue("name")
		if err := ValidSegment("volume name", in.name); err != nil {
			return nil, Errorf(CodeBadRequest, "%v", err)
		}
	}
	if rt.takes&bundleName != 0 {
		in.name = r.PathValue("name")
		if err := ValidBundleName(in.name); err != nil {
			return nil, Errorf(CodeBadRequest, "%v", err)
		}
	}
	if rt.takes&voxelQuery != 0 {
		v, err := ParseVoxel(r.URL.Query().Get("voxel"))
		if err != nil {
			return nil, Errorf(CodeBadRequest, "%v", err)
		}
		in.voxel = v
	}
	if rt.takes&uploadName != 0 {
		in.name = r.URL.Query().Get("name")
		if err := ValidSegment("upload name", in.name); err != nil {
			return nil, Errorf(CodeBadRequest, "%v", err)
		}
	}
	if rt.takes&noBody != 0 {
		if err := h.discardBody(w, r); err != nil {
			return nil, err
		}
	}
	return rt.fn(w, r, in)
}

// byID is the endpoint of a route whose answer is the Service's view of one job.
func byID[T any](get func(context.Context, string) (T, error)) endpoint {
	return func(w http.ResponseWriter, r *http.Request, in input) (any, error) {
		return get(r.Context(), in.id)
	}
}

// ServeHTTP applies the checks every request passes, routes it, and logs one line.
func (h *handler) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	start := time.Now()
	rw := &responseWriter{ResponseWriter: w, rc: http.NewResponseController(w), timeout: h.opts.WriteTimeout}
	// A keep-alive connection keeps the deadline of its previous response; start afresh.
	rw.extend()
	route := "-"
	var see *redirect
	if err := h.guard(rw, r); errors.As(err, &see) {
		http.Redirect(rw, r, see.to, http.StatusSeeOther)
		route = "token"
	} else if err != nil {
		h.fail(rw, r, err)
	} else if r.Method == http.MethodOptions {
		// A CORS preflight (the guard allowed its Origin and set the headers) or a plain
		// OPTIONS: either way there is nothing more to say.
		rw.Header().Set("Allow", "GET, POST, OPTIONS")
		rw.WriteHeader(http.StatusNoContent)
		route = "OPTIONS"
	} else {
		h.mux.ServeHTTP(rw, r)
		// The server flushes what the handler left buffered after it returns; that write
		// gets its full timeout too.
		rw.extend()
		if r.Pattern != "" {
			route = r.Pattern
		}
	}
	status := rw.status
	if status == 0 {
		status = http.StatusOK
	}
	attrs := []slog.Attr{
		slog.String("transport", string(TransportFrom(r.Context()))),
		slog.String("method", r.Method),
		slog.String("route", route),
		slog.Int("status", status),
		slog.Duration("duration", time.Since(start)),
	}
	if h.opts.Verbose {
		attrs = append(attrs, slog.String("uri", redactedURI(r.URL)))
		if rw.errMsg != "" {
			attrs = append(attrs, slog.String("error", rw.errMsg))
		}
	} else if rw.errCode != "" {
		attrs = append(attrs, slog.String("code", rw.errCode))
	}
	level := slog.LevelInfo
	if status >= 500 {
		level = slog.LevelError
	}
	h.opts.Logger.LogAttrs(r.Context(), level, "request", attrs...)
}

// redactedURI is the request URI for verbose logs, with the web token blanked out.
func redactedURI(u *url.URL) string {
	q := u.Query()
	if !q.Has("token") {
		return u.RequestURI()
	}
	q.Set("token", "REDACTED")
	return u.EscapedPath() + "?" + q.Encode()
}

// guard is what every request passes before it is routed.
func (h *handler) guard(w *responseWriter, r *http.Request) error {
	tr := TransportFrom(r.Context())
	// DNS rebinding: a page on evil.example that re-resolves its name to 127.0.0.1 reaches
	// the helper with Host: evil.example. Only loopback names are ours.
	if !loopbackHost(r.Host) {
		return Errorf(CodeForbidden, "host %q is not a loopback name or address", r.Host)
	}
	if err := cleanPath(r.URL.Path); err != nil {
		return err
	}
	if origin := r.Header.Get("Origin"); origin != "" {
		if tr != TransportWeb {
			// Browsers cannot reach a Unix socket; an Origin there means a forwarder.
			return Errorf(CodeForbidden, "cross-origin requests are not accepted on the %s transport", tr)
		}
		if !h.ownOrigin(r, origin) {
			return Errorf(CodeForbidden, "origin %q is not this helper's web origin", origin)
		}
		hd := w.Header()
		hd.Set("Access-Control-Allow-Origin", origin)
		hd.Add("Vary", "Origin")
		if r.Method == http.MethodOptions {
			hd.Set("Access-Control-Allow-Methods", "GET, POST, OPTIONS")
			hd.Set("Access-Control-Allow-Headers", "Authorization, Content-Type")
			hd.Set("Access-Control-Max-Age", "600")
		}
	}
	if r.Method == http.MethodOptions || tr != TransportWeb {
		return nil
	}
	if h.opts.Token == "" {
		return Errorf(CodeUnauthorized, "this helper has no web token; the web transport is closed")
	}
	if h.tokenOK(bearer(r)) {
		return nil
	}
	// The browser app carries the token in a cookie: the printed token URL is exchanged for an
	// HttpOnly, SameSite=Strict cookie on its first load and the page is loaded again at its
	// address without the token (a notebook server's login does the same), so the token leaves
	// the address bar, the history and anything copied from them. The token is never taken
	// from an API URL (logs).
	cookie := cookieName(r)
	c, err := r.Cookie(cookie)
	cookieOK := err == nil && h.tokenOK(c.Value)
	if !isAPI(r.URL.Path) && (r.Method == http.MethodGet || r.Method == http.MethodHead) {
		q := r.URL.Query()
		if t := q.Get("token"); t != "" && h.tokenOK(t) {
			http.SetCookie(w, &http.Cookie{Name: cookie, Value: t, Path: "/", HttpOnly: true, SameSite: http.SameSiteStrictMode})
			q.Del("token")
			to := r.URL.EscapedPath()
			if len(q) > 0 {
				to += "?" + q.Encode()
			}
			return &redirect{to}
		}
		if cookieOK {
			return nil
		}
	} else if cookieOK {
		// The cookie authorises the API for the page's own requests only. SameSite=Strict
		// keeps it from other sites' requests, but another port of this host is the same
		// site, so the browser's Sec-Fetch-Site (Fetch Metadata) must say same-origin (or
		// none: typed in the address bar). A cross-origin request that carries an Origin was
		// refused above; one that does not (an <img>, a no-cors fetch) is refused here.
		switch site := r.Header.Get("Sec-Fetch-Site"); site {
		case "", "same-origin", "none":
			return nil
		default:
			return Errorf(CodeForbidden, "a request from another site (Sec-Fetch-Site: %s) cannot use this helper's cookie", site)
		}
	}
	w.Header().Set("WWW-Authenticate", `Bearer realm="hubscope"`)
	return Errorf(CodeUnauthorized, "missing or wrong token (send Authorization: Bearer TOKEN, or open the token URL the helper printed)")
}

// redirect is guard's answer to the token URL: the cookie is set, go to to.
type redirect struct{ to string }

func (r *redirect) Error() string { return "see " + r.to }

// cookieName is the token cookie of the helper the request came in to: cookies do not keep
// ports apart, so each port has its own name and two helpers on one machine (or a helper
// restarted on another port) do not overwrite each other's.
func cookieName(r *http.Request) string {
	if la, ok := r.Context().Value(http.LocalAddrContextKey).(net.Addr); ok {
		if _, port, err := net.SplitHostPort(la.String()); err == nil {
			return tokenCookie + "_" + port
		}
	}
	return tokenCookie
}

// tokenOK compares in constant time: the digests have equal length whatever was sent.
func (h *handler) tokenOK(got string) bool {
	if got == "" {
		return false
	}
	sum := sha256.Sum256([]byte(got))
	return subtle.ConstantTimeCompare(sum[:], h.tokenSum[:]) == 1
}

func bearer(r *http.Request) string {
	a := r.Header.Get("Authorization")
	if len(a) > 7 && strings.EqualFold(a[:7], "bearer ") {
		return strings.TrimSpace(a[7:])
	}
	return ""
}

func isAPI(p string) bool { return p == Prefix || strings.HasPrefix(p, Prefix+"/") }

// ownOrigin reports whether origin is the helper's own web origin: http on a loopback name
// with the port of the connection the request came in on.
func (h *handler) ownOrigin(r *http.Request, origin string) bool {
	la, ok := r.Context().Value(http.LocalAddrContextKey).(net.Addr)
	if !ok {
		return false
	}
	_, port, err := net.SplitHostPort(la.String())
	if err != nil {
		return false
	}
	for _, host := range []string{"127.0.0.1", "localhost", "[::1]"} {
		if origin == "http://"+host+":"+port {
			return true
		}
	}
	return false
}

// loopbackHost reports whether a Host header names this machine: localhost or a loopback
// address, with or without a port.
func loopbackHost(host string) bool {
	if host == "" {
		return false
	}
	h := host
	if hh, _, err := net.SplitHostPort(host); err == nil {
		h = hh
	} else if strings.HasPrefix(h, "[") && strings.HasSuffix(h, "]") {
		h = h[1 : len(h)-1]
	}
	if strings.EqualFold(h, "localhost") {
		return true
	}
	ip := net.ParseIP(h)
	return ip != nil && ip.IsLoopback()
}

// cleanPath refuses request paths that are not in canonical form, so that nothing is
// resolved by redirects and no ".." segment (also sent as %2e%2e or ..%2f) reaches a route.
func cleanPath(p string) error {
	if !strings.HasPrefix(p, "/") || strings.ContainsAny(p, "\\\x00") {
		return Errorf(CodeBadRequest, "request path is not a clean absolute path")
	}
	c := path.Clean(p)
	if c != p && c+"/" != p {
		return Errorf(CodeBadRequest, "request path is not in canonical form (empty, . or .. segments)")
	}
	for _, seg := range strings.Split(p, "/") {
		if seg == ".." || seg == "." {
			return Errorf(CodeBadRequest, "request path has a %q segment", seg)
		}
	}
	return nil
}

// fail writes err in the protocol's error form (unless a response is already under way).
func (h *handler) fail(w http.ResponseWriter, r *http.Request, err error) {
	var e *Error
	if !errors.As(err, &e) {
		var mbe *http.MaxBytesError
		switch {
		case errors.As(err, &mbe):
			e = Errorf(CodeTooLarge, "request body exceeds %d bytes", mbe.Limit)
		case errors.Is(err, context.Canceled) && r.Context().Err() != nil:
			e = &Error{Status: 499, Code: CodeUnavailable, Message: "client went away"}
		default:
			e = Errorf(CodeInternal, "%v", err)
		}
	}
	if e.Status == 0 {
		e = &Error{Status: codeStatusOr(e.Code), Code: e.Code, Message: e.Message}
	}
	rw, _ := w.(*responseWriter)
	if rw != nil {
		rw.errCode, rw.errMsg = e.Code, e.Message
		if rw.wroteHeader {
			// Too late for a status line; the log line records what went wrong.
			return
		}
	}
	writeJSON(w, e.Status, ErrorBody{Error: e})
}

func codeStatusOr(code string) int {
	if st, ok := codeStatus[code]; ok {
		return st
	}
	return http.StatusInternalServerError
}

func writeJSON(w http.ResponseWriter, status int, v any) {
	b, err := json.Marshal(v)
	if err != nil {
		status = http.StatusInternalServerError
		b, _ = json.Marshal(ErrorBody{Error: Errorf(CodeInternal, "encoding the response: %v", err)})
	}
	hd := w.Header()
	hd.Set("Content-Type", "application/json; charset=utf-8")
	hd.Set("Content-Length", strconv.Itoa(len(b)+1))
	hd.Set("X-Content-Type-Options", "nosniff")
	hd.Set("Cache-Control", "no-store")
	w.WriteHeader(status)
	w.Write(append(b, '\n'))
}

// decode reads a JSON request body into v: at most MaxBodyBytes, no unknown fields, nothing
// after the value.
func (h *handler) decode(w http.ResponseWriter, r *http.Request, v any) error {
	if ct := r.Header.Get("Content-Type"); ct != "" {
		if mt, _, err := mime.ParseMediaType(ct); err != nil || mt != "application/json" {
			return &Error{Status: http.StatusUnsupportedMediaType, Code: CodeBadRequest, Message: fmt.Sprintf("request body must be application/json, not %q", ct)}
		}
	}
	if r.ContentLength > h.opts.MaxBodyBytes {
		return Errorf(CodeTooLarge, "request body of %d bytes exceeds %d", r.ContentLength, h.opts.MaxBodyBytes)
	}
	http.NewResponseController(w).SetReadDeadline(time.Now().Add(h.opts.ReadTimeout))
	body := http.MaxBytesReader(w, r.Body, h.opts.MaxBodyBytes)
	dec := json.NewDecoder(body)
	dec.DisallowUnknownFields()
	if err := dec.Decode(v); err != nil {
		return bodyError(err)
	}
	if _, err := dec.Token(); err != io.EOF {
		if err != nil {
			return bodyError(err)
		}
		return Errorf(CodeBadRequest, "request body: data after the JSON value")
	}
	return nil
}

func bodyError(err error) error {
	var mbe *http.MaxBytesError
	if errors.As(err, &mbe) {
		return Errorf(CodeTooLarge, "request body exceeds %d bytes", mbe.Limit)
	}
	if errors.Is(err, io.EOF) {
		return Errorf(CodeBadRequest, "request body: empty, a JSON value was expected")
	}
	var se *settings.SettingError
	if errors.As(err, &se) {
		return BadSettings(se)
	}
	return Errorf(CodeBadRequest, "request body: %v", err)
}

// discardBody reads (and throws away) a body an endpoint does not use, within the JSON limit.
func (h *handler) discardBody(w http.ResponseWriter, r *http.Request) error {
	http.NewResponseController(w).SetReadDeadline(time.Now().Add(h.opts.ReadTimeout))
	n, err := io.Copy(io.Discard, http.MaxBytesReader(w, r.Body, h.opts.MaxBodyBytes))
	if err != nil {
		return bodyError(err)
	}
	if n > 0 {
		return Errorf(CodeBadRequest, "this endpoint takes no request body")
	}
	return nil
}

func (h *handler) methodNotAllowed(w http.ResponseWriter, r *http.Request) {
	w.Header().Set("Allow", "GET, POST")
	h.fail(w, r, &Error{Status: http.StatusMethodNotAllowed, Code: CodeBadRequest, Message: fmt.Sprintf("method %s is not allowed on this endpoint", r.Method)})
}

// root serves the browser build (when WebRoot is set) and answers unknown API paths.
func (h *handler) root(w http.ResponseWriter, r *http.Request) {
	if isAPI(r.URL.Path) {
		h.fail(w, r, Errorf(CodeNotFound, "no endpoint %s %s", r.Method, r.URL.Path))
		return
	}
	if r.Method != http.MethodGet && r.Method != http.MethodHead {
		h.methodNotAllowed(w, r)
		return
	}
	if h.static != nil {
		w.Header().Set("X-Content-Type-Options", "nosniff")
		w.Header().Set("Cache-Control", "no-store")
		h.static.ServeHTTP(w, r)
		return
	}
	if r.URL.Path != "/" {
		h.fail(w, r, Errorf(CodeNotFound, "no file %s (this helper serves no browser build)", r.URL.Path))
		return
	}
	w.Header().Set("Content-Type", "text/plain; charset=utf-8")
	w.Header().Set("X-Content-Type-Options", "nosniff")
	fmt.Fprintf(w, "%s helper %s is running; its API is at %s. This helper serves no browser build.\n", schema.AppName, schema.Version, Prefix)
}

func (h *handler) info(w http.ResponseWriter, r *http.Request, _ input) (any, error) {
	info, err := h.svc.Info(r.Context())
	if err != nil {
		return nil, err
	}
	// What the wiring decides, the wiring reports.
	info.Transport = string(TransportFrom(r.Context()))
	if info.API == "" {
		info.API = Prefix
	}
	if info.MaxUploadBytes <= 0 || info.MaxUploadBytes > h.opts.MaxUploadBytes {
		info.MaxUploadBytes = h.opts.MaxUploadBytes
	}
	return info, nil
}

func (h *handler) upload(w http.ResponseWriter, r *http.Request, in input) (any, error) {
	if r.ContentLength > h.opts.MaxUploadBytes {
		return nil, Errorf(CodeTooLarge, "upload of %d bytes exceeds the limit of %d", r.ContentLength, h.opts.MaxUploadBytes)
	}
	body := &uploadBody{
		r:       http.MaxBytesReader(w, r.Body, h.opts.MaxUploadBytes),
		rc:      http.NewResponseController(w),
		timeout: h.opts.ReadTimeout,
		rate:    h.opts.MinUploadRate,
		start:   time.Now(),
		grace:   h.opts.UploadGrace,
	}
	up, err := h.svc.Upload(r.Context(), in.name, body)
	// Whatever the Service made of the short read, these say what the client did wrong.
	switch {
	case body.tooLarge:
		return nil, Errorf(CodeTooLarge, "upload exceeds the limit of %d bytes", h.opts.MaxUploadBytes)
	case body.tooSlow:
		return nil, &Error{Status: http.StatusRequestTimeout, Code: CodeBadRequest, Message: fmt.Sprintf(
			"upload too slow: %d bytes in %v, below the minimum rate of %d bytes/s (after a grace of %v); the upload was dropped",
			body.n, time.Since(body.start).Round(time.Millisecond), h.opts.MinUploadRate, h.opts.UploadGrace)}
	case body.stalled:
		return nil, &Error{Status: http.StatusRequestTimeout, Code: CodeBadRequest, Message: fmt.Sprintf(
			"upload stalled: no bytes for %v after %d bytes; the upload was dropped", h.opts.ReadTimeout, body.n)}
	}
	if err != nil {
		return nil, err
	}
	return up, nil
}

// uploadBody streams an upload to the Service under two deadlines, set on the connection
// before each read: one read may wait at most timeout for bytes (a stalled sender is
// dropped), and the whole upload must be done by start + grace + n/rate, which moves out as
// the n bytes arrive (a sender that keeps up the minimum rate is never cut off, one that
// trickles is, whatever its Content-Length claims). It notes which limit ended the body; the
// Service sees the read fail and drops what it stored.
type uploadBody struct {
	r       io.Reader
	rc      *http.ResponseController
	timeout time.Duration
	rate    int64
	start   time.Time
	grace   time.Duration
	n       int64

	tooLarge, tooSlow, stalled bool
}

// total is the deadline of the whole upload with n bytes received.
func (b *uploadBody) total() time.Time {
	// n/rate seconds, without overflowing a Duration (at most 2^32 s, over a century).
	const maxSec = 1 << 32
	sec := b.n / b.rate
	if sec >= maxSec {
		return b.start.Add(b.grace + maxSec*time.Second)
	}
	frac := time.Duration(float64(b.n%b.rate) / float64(b.rate) * float64(time.Second))
	return b.start.Add(b.grace + time.Duration(sec)*time.Second + frac)
}

func (b *uploadBody) Read(p []byte) (int, error) {
	if b.tooSlow || b.stalled {
		return 0, os.ErrDeadlineExceeded
	}
	now := time.Now()
	total := b.total()
	if !now.Before(total) {
		b.tooSlow = true
		return 0, fmt.Errorf("upload too slow: %w", os.ErrDeadlineExceeded)
	}
	dl, idle := now.Add(b.timeout), true
	if total.Before(dl) {
		dl, idle = total, false
	}
	b.rc.SetReadDeadline(dl)
	n, err := b.r.Read(p)
	b.n += int64(n)
	var mbe *http.MaxBytesError
	switch {
	case err == nil || err == io.EOF:
	case errors.As(err, &mbe):
		b.tooLarge = true
	case errors.Is(err, os.ErrDeadlineExceeded):
		if idle {
			b.stalled = true
		} else {
			b.tooSlow = true
		}
	}
	return n, err
}

func (h *handler) submit(w http.ResponseWriter, r *http.Request, _ input) (any, error) {
	var req JobRequest
	if err := h.decode(w, r, &req); err != nil {
		return nil, err
	}
	// Security: only a local client names files on the helper's disk.
	if TransportFrom(r.Context()) == TransportWeb && (req.Scan != "" || req.Mask != "" || req.Norm != "" || req.Open != "") {
		return nil, Errorf(CodeForbidden, "the web transport cannot name files on the helper's disk; upload the scan (POST %s/uploads) and submit its ID", Prefix)
	}
	if TransportFrom(r.Context()) == TransportWeb && req.Settings != nil {
		for _, key := range []string{"atlas", "atlas_names"} {
			if _, ok := req.Settings.DiskPaths()[key]; ok {
				return nil, Errorf(CodeForbidden, "the web transport cannot name files on the helper's disk (settings' %s); use the embedded atlas, aal", key)
			}
		}
	}
	for _, f := range []struct{ kind, v string }{{"scan_upload", req.ScanUpload}, {"mask_upload", req.MaskUpload}} {
		if f.v != "" {
			if err := ValidSegment(f.kind, f.v); err != nil {
				return nil, Errorf(CodeBadRequest, "%v", err)
			}
		}
	}
	return h.svc.Submit(r.Context(), req)
}

func (h *handler) jobs(w http.ResponseWriter, r *http.Request, _ input) (any, error) {
	jobs, err := h.svc.Jobs(r.Context())
	if jobs == nil {
		jobs = []Job{}
	}
	return jobs, err
}

// events streams the job's events as NDJSON. Every write has a deadline: a client that stops
// reading is dropped within WriteTimeout once the socket buffers fill, and returning cancels
// the context the Service's producer watches, so its goroutines end too.
func (h *handler) events(w http.ResponseWriter, r *http.Request, in input) (any, error) {
	ctx, cancel := context.WithCancel(r.Context())
	defer cancel()
	ch, err := h.svc.Events(ctx, in.id)
	if err != nil {
		return nil, err
	}
	hd := w.Header()
	hd.Set("Content-Type", EventContentType)
	hd.Set("Cache-Control", "no-store")
	hd.Set("X-Content-Type-Options", "nosniff")
	rw, ok := w.(*responseWriter)
	if !ok {
		rw = &responseWriter{ResponseWriter: w, rc: http.NewResponseController(w), timeout: h.opts.WriteTimeout}
	}
	rw.WriteHeader(http.StatusOK)
	if rw.flush() != nil {
		return nil, nil
	}
	for {
		select {
		case <-ctx.Done():
			return nil, nil
		case ev, ok := <-ch:
			if !ok {
				return nil, nil
			}
			b, err := json.Marshal(ev)
			if err != nil {
				return nil, nil
			}
			if _, err := rw.Write(append(b, '\n')); err != nil {
				return nil, nil
			}
			if rw.flush() != nil {
				return nil, nil
			}
			if ev.Job.State.Terminal() {
				return nil, nil
			}
		}
	}
}

func writeVolume(w http.ResponseWriter, v *Volume) error {
	if v == nil {
		return Errorf(CodeInternal, "the helper returned no volume")
	}
	if err := v.Header.check(); err != nil {
		return Errorf(CodeInternal, "%v", err)
	}
	if len(v.Data) != v.Header.Voxels() {
		return Errorf(CodeInternal, "volume %q: %d values for %d voxels", v.Header.Name, len(v.Data), v.Header.Voxels())
	}
	w.Header().Set("Content-Type", VolumeContentType)
	w.Header().Set("Cache-Control", "no-store")
	w.WriteHeader(http.StatusOK)
	// Errors now are write errors: the client went away or stopped reading.
	WriteVolume(w, v)
	return nil
}

func (h *handler) volume(w http.ResponseWriter, r *http.Request, in input) (any, error) {
	v, err := h.svc.Volume(r.Context(), in.id, in.name)
	if err != nil {
		return nil, err
	}
	return nil, writeVolume(w, v)
}

func (h *handler) seed(w http.ResponseWriter, r *http.Request, in input) (any, error) {
	v, err := h.svc.SeedMap(r.Context(), in.id, in.voxel)
	if err != nil {
		return nil, err
	}
	return nil, writeVolume(w, v)
}

func (h *handler) series(w http.ResponseWriter, r *http.Request, in input) (any, error) {
	return h.svc.Series(r.Context(), in.id, in.voxel)
}

func (h *handler) files(w http.ResponseWriter, r *http.Request, in input) (any, error) {
	fs, err := h.svc.Files(r.Context(), in.id)
	if fs == nil {
		fs = []FileInfo{}
	}
	return fs, err
}

func (h *handler) file(w http.ResponseWriter, r *http.Request, in input) (any, error) {
	name := in.name
	rc, fi, err := h.svc.OpenFile(r.Context(), in.id, name)
	if err != nil {
		return nil, err
	}
	defer rc.Close()
	hd := w.Header()
	hd.Set("Content-Type", "application/octet-stream")
	hd.Set("X-Content-Type-Options", "nosniff")
	hd.Set("Cache-Control", "no-store")
	hd.Set("Content-Disposition", mime.FormatMediaType("attachment", map[string]string{"filename": path.Base(name)}))
	if fi.Size > 0 {
		hd.Set("Content-Length", strconv.FormatInt(fi.Size, 10))
	}
	w.WriteHeader(http.StatusOK)
	// A failure from here on (a short file, a client gone) can only cut the body short; with
	// Content-Length set, the client sees the truncation.
	io.Copy(w, rc)
	return nil, nil
}

// responseWriter records the status for the log line and gives every write a fresh
// deadline, so a client that stops reading is dropped within the timeout whatever it asked
// for (an event stream, a volume, a download).
type responseWriter struct {
	http.ResponseWriter
	rc          *http.ResponseController
	timeout     time.Duration
	status      int
	wroteHeader bool
	errCode     string
	errMsg      string
}

func (w *responseWriter) extend() { w.rc.SetWriteDeadline(time.Now().Add(w.timeout)) }

func (w *responseWriter) WriteHeader(status int) {
	if !w.wroteHeader {
		w.status, w.wroteHeader = status, true
	}
	w.ResponseWriter.WriteHeader(status)
}

func (w *responseWriter) Write(p []byte) (int, error) {
	if !w.wroteHeader {
		w.WriteHeader(http.StatusOK)
	}
	w.extend()
	return w.ResponseWriter.Write(p)
}

func (w *responseWriter) flush() error {
	w.extend()
	return w.rc.Flush()
}

// Unwrap lets http.ResponseController reach the connection underneath.
func (w *responseWriter) Unwrap() http.ResponseWriter { return w.ResponseWriter }
