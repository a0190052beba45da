package main

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	iofs "io/fs"
	"log"
	"log/slog"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/hubscope/hubscope/helper/daemon"
	"github.com/hubscope/hubscope/ipc"
	"github.com/hubscope/hubscope/ipc/schema"
)

// shutdownGrace bounds how long a stopping helper waits for its jobs to stop (the pipeline
// stops within a second of cancellation) and then for requests in flight.
const shutdownGrace = 10 * time.Second

// cmdServe runs the helper daemon behind ipc's server: the Unix socket for the desktop app
// and, with --web, loopback TCP with a bearer token for the browser build. It returns nil on
// SIGINT/SIGTERM (ctx) and on idle exit. Jobs still queued or running then are cancelled and
// marked interrupted, with the message that the helper was shut down: the user did not cancel
// them, and a restarted helper treats jobs it finds unfinished the same way.
func cmdServe(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := newFlags("serve", "serve [--socket PATH] [--web 127.0.0.1:PORT [--web-root DIR]] [--results DIR] [--open-root DIR] [--idle-exit 10m] [--max-upload 4GiB] [--backend auto|cpu|cuda] [--verbose]", stdout, stderr)
	socket := fs.String("socket", "", "Unix socket `PATH` to listen on (default "+ipc.DefaultSocketPath()+")")
	web := fs.String("web", "", "also serve the browser build on this loopback `ADDRESS`, e.g. 127.0.0.1:8765 (a token URL is printed)")
	webRoot := fs.String("web-root", "", "with --web: the browser build `DIR` to serve as the page (the folder \"make web\" writes, bin/web)")
	results := fs.String("results", "", "results `DIR` (default $XDG_DATA_HOME/hubscope/results, else ~/.local/share/hubscope/results)")
	openRoot := fs.String("open-root", "", "a `DIR` of finished results (bundles, a cohort's derivatives, comparisons) that clients may list and open, besides the jobs' own; the browser app's \"Open results folder…\" lists them")
	idleExit := fs.Duration("idle-exit", 0, "exit after this `DURATION` with no client connected and no job queued or running (0 = never)")
	maxUpload := fs.String("max-upload", "4GiB", "largest scan `SIZE` the browser build may upload (B, KiB, MiB, GiB, TiB; KB, MB, GB, TB)")
	backend := fs.String("backend", "auto", "`NAME`: auto (CUDA when a GPU works, else CPU), cpu or cuda")
	verbose := fs.Bool("verbose", false, "log scan names, engine notes and request details (off: logs never name a scan)")
	pos, err := parse(fs, args)
	if err != nil {
		return err
	}
	if len(pos) > 0 {
		fmt.Fprintf(stderr, "serve: unexpected argument %q\n", pos[0])
		return errUsage
	}
	if *webRoot != "" && *web == "" {
		fmt.Fprintf(stderr, "serve: --web-root %s needs --web 127.0.0.1:PORT (the page is served on the web address)\n", *webRoot)
		return errUsage
	}
	var root iofs.FS
	if *web != "" {
		if root, err = webPage(*webRoot); err != nil {
			return err
		}
	}
	limit, err := parseBytes(*maxUpload)
	if err != nil {
		fmt.Fprintf(stderr, "serve: --max-upload: %v\n", err)
		return errUsage
	}

	logger := log.New(stderr, "hubscope-helper: ", log.LstdFlags)
	d, err := daemon.New(daemon.Options{ResultsDir: *results, MaxUpload: limit, Backend: *backend,
		Verbose: *verbose, Log: logger, OpenRoot: *openRoot})
	if err != nil {
		return err
	}
	stopDaemon := func() {
		sctx, cancel := context.WithTimeout(context.Background(), shutdownGrace)
		defer cancel()
		if err := d.Close(sctx); err != nil {
			logger.Print(err)
		}
	}
	srv, err := ipc.NewServer(d, ipc.ServerOptions{Socket: *socket, Web: *web,
		Handler: ipc.HandlerOptions{Logger: slog.New(slog.NewTextHandler(stderr, nil)), Verbose: *verbose,
			MaxUploadBytes: limit, WebRoot: root, Report: reportPDF}})
	if err != nil {
		stopDaemon()
		return err
	}
	fmt.Fprintf(stdout, "hubscope-helper %s serving on unix %s\n", schema.Version, srv.SocketPath())
	if srv.WebAddr() != "" {
		fmt.Fprintf(stdout, "web: open %s\n", srv.TokenURL())
	}
	fmt.Fprintf(stdout, "results: %s\nbackend: %s\n", d.Dir(), d.Backend())

	served := make(chan error, 1)
	go func() { served <- srv.Serve() }()
	var tick <-chan time.Time
	if *idleExit > 0 {
		t := time.NewTicker(min(*idleExit/4, 5*time.Second) + time.Millisecond)
		defer t.Stop()
		tick = t.C
	}
	var serveErr error
loop:
	for {
		select {
		case <-ctx.Done():
			logger.Print("stopping (signal)")
			break loop
		case serveErr = <-served:
			break loop
		case <-tick:
			since, noClients := srv.Idle()
			noJobs, jobsSince := d.Idle()
			if noClients && noJobs && time.Since(later(since, jobsSince)) >= *idleExit {
				logger.Printf("stopping: no client and no job for %v", *idleExit)
				break loop
			}
		}
	}
	// Jobs first, so that their terminal events reach the streams still open; then the server.
	stopDaemon()
	sctx, cancel := context.WithTimeout(context.Background(), shutdownGrace)
	defer cancel()
	if err := srv.Shutdown(sctx); err != nil {
		srv.Close()
	}
	return serveErr
}

// webPage is what the web address serves as its page: the browser build in dir, checked
// to hold what its index.html loads (so a half-built folder fails here, in words, rather than
// as a blank page), or, without dir, a page that says how to build and serve it.
func webPage(dir string) (iofs.FS, error) {
	if dir == "" {
		return helpPage{}, nil
	}
	fi, err := os.Stat(dir)
	if err != nil {
		return nil, fmt.Errorf("--web-root %s: %w (build the browser app with `make web`, which writes bin/web)", dir, err)
	}
	if !fi.IsDir() {
		return nil, fmt.Errorf("--web-root %s is not a folder; give the folder `make web` writes (bin/web)", dir)
	}
	for _, f := range []string{"index.html", "wasm_exec.js", "hubscope.wasm"} {
		if _, err := os.Stat(filepath.Join(dir, f)); err != nil {
			return nil, fmt.Errorf("--web-root %s has no %s; is it the folder `make web` writes (bin/web)? %w", dir, f, err)
		}
	}
	return os.DirFS(dir), nil
}

// webHelp is the page of a helper started with --web but no --web-root.
const webHelp = `<!DOCTYPE html>
<html lang="en"><head><meta charset="utf-8"><title>HubScope helper</title></head>
<body style="font-family: sans-serif; max-width: 44em; margin: 2em auto; line-height: 1.5">
<h1>The HubScope helper is running</h1>
<p>It was started without the browser app, so there is nothing to show here yet.</p>
<p>To use HubScope in this browser, build the browser app in the HubScope source folder
with <code>make web</code> (it writes <code>bin/web</code>), then start the helper with it:</p>
<pre>hubscope-helper serve --web 127.0.0.1:8765 --web-root bin/web</pre>
<p>and open the address it prints (the one with <code>?token=</code>).
Or use the desktop app, <code>hubscope</code>, which needs no browser.</p>
</body></html>
`

// helpPage is a file system holding webHelp as its only file, index.html; the ipc handler
// serves it at / (the API and its token rules are unchanged).
type helpPage struct{}

func (helpPage) Open(name string) (iofs.File, error) {
	switch name {
	case ".":
		return &helpFile{name: ".", dir: true, Reader: bytes.NewReader(nil)}, nil
	case "index.html":
		return &helpFile{name: name, Reader: bytes.NewReader([]byte(webHelp))}, nil
	}
	return nil, &iofs.PathError{Op: "open", Path: name, Err: iofs.ErrNotExist}
}

// helpFile is index.html (seekable, as http.FileServer needs for Content-Length and ranges)
// or the root folder, which lists nothing: the server only looks for its index.html.
type helpFile struct {
	*bytes.Reader
	name string
	dir  bool
}

func (f *helpFile) Stat() (iofs.FileInfo, error) { return f, nil }
func (f *helpFile) Close() error                 { return nil }
func (f *helpFile) Read(p []byte) (int, error) {
	if f.dir {
		return 0, &iofs.PathError{Op: "read", Path: f.name, Err: errors.New("is a directory")}
	}
	return f.Reader.Read(p)
}
func (f *helpFile) ReadDir(int) ([]iofs.DirEntry, error) { return nil, nil }

func (f *helpFile) Name() string { return f.name }
func (f *helpFile) Size() int64 {
	if f.dir {
		return 0
	}
	return int64(len(webHelp))
}
func (f *helpFile) Mode() iofs.FileMode {
	if f.dir {
		return iofs.ModeDir | 0o555
	}
	return 0o444
}
func (f *helpFile) ModTime() time.Time { return time.Time{} }
func (f *helpFile) IsDir() bool        { return f.dir }
func (f *helpFile) Sys() any           { return nil }

func later(a, b time.Time) time.Time {
	if a.After(b) {
		return a
	}
	return b
}

// parseBytes reads a size such as 4GiB, 500MB or 1048576 (bytes).
func parseBytes(s string) (int64, error) {
	t := strings.TrimSpace(s)
	units := []struct {
		suffix string
		factor float64
	}{{"KiB", 1 << 10}, {"MiB", 1 << 20}, {"GiB", 1 << 30}, {"TiB", 1 << 40},
		{"KB", 1e3}, {"MB", 1e6}, {"GB", 1e9}, {"TB", 1e12}, {"B", 1}}
	factor := 1.0
	for _, u := range units {
		if v, ok := strings.CutSuffix(t, u.suffix); ok {
			t, factor = strings.TrimSpace(v), u.factor
			break
		}
	}
	x, err := strconv.ParseFloat(t, 64)
	if err != nil || !(x > 0) || x*factor > 1<<62 {
		return 0, fmt.Errorf("%q: want a positive size such as 4GiB or 500MB", s)
	}
	return int64(x * factor), nil
}
