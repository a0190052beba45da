//go:build !js

package ipc

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"io/fs"
	"log/slog"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"sync"
	"time"
)

// Server timeouts and sizes (writes are bounded per write by the handler instead of per
// response, because event streams last as long as a job).
const (
	serverReadHeaderTimeout = 10 * time.Second
	serverIdleTimeout       = 2 * time.Minute
	serverMaxHeaderBytes    = 64 << 10
	// staleDialTimeout bounds the probe of an existing socket file.
	staleDialTimeout = time.Second
)

// DefaultSocketPath is where the helper listens and the app looks: in the user's runtime
// directory ($XDG_RUNTIME_DIR/hubscope/helper.sock), else in a private directory named per
// user under the temporary directory (hubscope-UID/helper.sock).
func DefaultSocketPath() string {
	if d := os.Getenv("XDG_RUNTIME_DIR"); d != "" && filepath.IsAbs(d) {
		return filepath.Join(d, "hubscope", "helper.sock")
	}
	return filepath.Join(os.TempDir(), "hubscope-"+strconv.Itoa(os.Getuid()), "helper.sock")
}

// privateDir makes sure dir exists, is a real directory owned by this user, and that no one
// else may write into it (strict: no group or other permission bits at all). Anyone who can
// write to the socket's directory can replace the socket with their own.
func privateDir(dir string, strict bool) error {
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return fmt.Errorf("socket directory %s: %w", dir, err)
	}
	fi, err := os.Lstat(dir)
	if err != nil {
		return fmt.Errorf("socket directory %s: %w", dir, err)
	}
	if !fi.IsDir() {
		return fmt.Errorf("socket directory %s is not a directory (%s)", dir, fi.Mode().Type())
	}
	if err := checkOwner(dir, fi); err != nil {
		return err
	}
	mask := fs.FileMode(0o022)
	if strict {
		mask = 0o077
	}
	if fi.Mode().Perm()&mask != 0 {
		return fmt.Errorf("socket directory %s has mode %#o; it must not be open to other users (want 0700)", dir, fi.Mode().Perm())
	}
	return nil
}

// socketDir prepares the directory of socket: the default location must be private (0700);
// a directory the user chose must at least be theirs and not writable by others.
func socketDir(socket string) error {
	dir := filepath.Dir(socket)
	return privateDir(dir, socket == DefaultSocketPath())
}

// ServerOptions configure NewServer.
type ServerOptions struct {
	// Socket is the Unix socket's path; "" = DefaultSocketPath().
	Socket string
	// NoSocket serves the web transport only.
	NoSocket bool
	// Web, when set, also serves on TCP at this loopback address ("127.0.0.1:PORT";
	// port 0 picks a free one). Any other host is refused.
	Web string
	// Token is the web transport's bearer token; "" = 256 random bits (crypto/rand).
	Token string
	// Handler configures the routes and limits (its Token is set from Token).
	Handler HandlerOptions
}

// Server serves a Service on the Unix socket and, optionally, on loopback TCP.
type Server struct {
	http   *http.Server
	socket string
	lock   *os.File
	lns    []net.Listener
	web    net.Listener
	token  string
	cancel context.CancelFunc
	log    *slog.Logger

	mu        sync.Mutex
	conns     int
	idleSince time.Time
	closed    bool
}

// NewServer opens the listeners (so that "already running" and permission errors surface
// before anything is served); Serve then serves them until Shutdown.
func NewServer(svc Service, opts ServerOptions) (_ *Server, err error) {
	s := &Server{idleSince: time.Now()}
	defer func() {
		if err != nil {
			s.closeListeners()
		}
	}()
	if opts.NoSocket && opts.Web == "" {
		return nil, errors.New("ipc server: neither a socket nor a web address to serve on")
	}
	if !opts.NoSocket {
		s.socket = opts.Socket
		if s.socket == "" {
			s.socket = DefaultSocketPath()
		}
		ln, err := s.listenUnix()
		if err != nil {
			return nil, err
		}
		s.lns = append(s.lns, ln)
	}
	if opts.Web != "" {
		ln, err := listenLoopback(opts.Web)
		if err != nil {
			return nil, err
		}
		s.web = ln
		s.lns = append(s.lns, ln)
		s.token = opts.Token
		if s.token == "" {
			var b [32]byte
			if _, err := rand.Read(b[:]); err != nil {
				return nil, fmt.Errorf("ipc server: drawing the web token: %w", err)
			}
			s.token = hex.EncodeToString(b[:])
		}
	}
	hopts := opts.Handler.withDefaults()
	hopts.Token = s.token
	s.log = hopts.Logger
	base, cancel := context.WithCancel(context.Background())
	s.cancel = cancel
	s.http = &http.Server{
		Handler:           NewHandler(svc, hopts),
		ReadHeaderTimeout: serverReadHeaderTimeout,
		IdleTimeout:       serverIdleTimeout,
		MaxHeaderBytes:    serverMaxHeaderBytes,
		ErrorLog:          slog.NewLogLogger(hopts.Logger.Handler(), slog.LevelWarn),
		BaseContext:       func(net.Listener) context.Context { return base },
		ConnContext: func(ctx context.Context, c net.Conn) context.Context {
			if _, ok := c.LocalAddr().(*net.UnixAddr); ok {
				return ContextWithTransport(ctx, TransportUnix)
			}
			return ContextWithTransport(ctx, TransportWeb)
		},
		ConnState: s.connState,
	}
	// Shutdown waits for requests to finish; event streams would not on their own, so it
	// first cancels every request's context (streams end, the Service's producers stop).
	s.http.RegisterOnShutdown(cancel)
	return s, nil
}

// listenUnix takes the socket's lock, replaces a stale socket file and listens with mode 0600.
func (s *Server) listenUnix() (net.Listener, error) {
	if err := socketDir(s.socket); err != nil {
		return nil, err
	}
	// The lock file beside the socket is held for the server's life: two helpers starting
	// together cannot both decide the socket is stale and remove each other's.
	lock, err := os.OpenFile(s.socket+".lock", os.O_RDWR|os.O_CREATE, 0o600)
	if err != nil {
		return nil, fmt.Errorf("ipc server: %w", err)
	}
	busy, err := tryLock(lock)
	if err != nil {
		lock.Close()
		return nil, fmt.Errorf("ipc server: locking %s: %w", lock.Name(), err)
	}
	if busy {
		lock.Close()
		return nil, fmt.Errorf("a helper is already running at %s", s.socket)
	}
	s.lock = lock
	if fi, err := os.Lstat(s.socket); err == nil {
		if fi.Mode().Type() != fs.ModeSocket {
			return nil, fmt.Errorf("%s exists and is not a socket; refusing to replace it", s.socket)
		}
		if c, err := net.DialTimeout("unix", s.socket, staleDialTimeout); err == nil {
			c.Close()
			return nil, fmt.Errorf("a helper is already running at %s", s.socket)
		}
		// Nobody answers: a helper that died without cleaning up.
		if err := os.Remove(s.socket); err != nil {
			return nil, fmt.Errorf("removing the stale socket %s: %w", s.socket, err)
		}
	}
	ln, err := net.Listen("unix", s.socket)
	if err != nil {
		return nil, fmt.Errorf("ipc server: %w", err)
	}
	// The directory is private, so the moment between listen and chmod exposes nothing.
	if err := os.Chmod(s.socket, 0o600); err != nil {
		ln.Close()
		return nil, fmt.Errorf("ipc server: %w", err)
	}
	return ln, nil
}

// listenLoopback listens on a loopback TCP address; the web transport never faces a network.
func listenLoopback(addr string) (net.Listener, error) {
	host, port, err := net.SplitHostPort(addr)
	if err != nil {
		return nil, fmt.Errorf("web address %q: want 127.0.0.1:PORT: %v", addr, err)
	}
	if host == "localhost" {
		host = "127.0.0.1"
	}
	ip := net.ParseIP(host)
	if ip == nil || !ip.IsLoopback() {
		return nil, fmt.Errorf("web address %q: %q is not a loopback address; the web transport serves this machine only (use 127.0.0.1:PORT)", addr, host)
	}
	ln, err := net.Listen("tcp", net.JoinHostPort(ip.String(), port))
	if err != nil {
		return nil, fmt.Errorf("web transport: %w", err)
	}
	return ln, nil
}

func (s *Server) connState(_ net.Conn, st http.ConnState) {
	s.mu.Lock()
	defer s.mu.Unlock()
	switch st {
	case http.StateNew:
		s.conns++
	case http.StateClosed, http.StateHijacked:
		s.conns--
		if s.conns == 0 {
			s.idleSince = time.Now()
		}
	}
}

// Idle reports whether no client is connected, and since when (for the daemon's idle exit).
func (s *Server) Idle() (idleSince time.Time, idle bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.conns > 0 {
		return time.Time{}, false
	}
	return s.idleSince, true
}

// SocketPath is the Unix socket served ("" with NoSocket).
func (s *Server) SocketPath() string { return s.socket }

// WebAddr is the TCP address of the web transport ("" when off).
func (s *Server) WebAddr() string {
	if s.web == nil {
		return ""
	}
	return s.web.Addr().String()
}

// WebURL is the web transport's base URL, e.g. http://127.0.0.1:8765 ("" when off).
func (s *Server) WebURL() string {
	if s.web == nil {
		return ""
	}
	return "http://" + s.web.Addr().String()
}

// Token is the web transport's bearer token ("" when off).
func (s *Server) Token() string { return s.token }

// TokenURL is what to open in a browser, printed the way a Jupyter server prints its own:
// http://127.0.0.1:PORT/?token=… ("" when the web transport is off).
func (s *Server) TokenURL() string {
	if s.web == nil {
		return ""
	}
	return s.WebURL() + "/?token=" + s.token
}

// Serve serves every listener until Shutdown or Close; it returns nil after those, else the
// first listener's error.
func (s *Server) Serve() error {
	errs := make(chan error, len(s.lns))
	for _, ln := range s.lns {
		go func() { errs <- s.http.Serve(ln) }()
	}
	var first error
	for range s.lns {
		if err := <-errs; err != nil && !errors.Is(err, http.ErrServerClosed) && first == nil {
			first = err
			s.Close()
		}
	}
	return first
}

// Shutdown stops accepting, ends event streams, waits (up to ctx) for requests to finish,
// removes the socket and releases its lock.
func (s *Server) Shutdown(ctx context.Context) error {
	err := s.http.Shutdown(ctx)
	s.closeListeners()
	return err
}

// Close stops at once, cutting off requests in flight.
func (s *Server) Close() error {
	s.cancel()
	err := s.http.Close()
	s.closeListeners()
	return err
}

func (s *Server) closeListeners() {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed {
		return
	}
	s.closed = true
	for _, ln := range s.lns {
		ln.Close() // a Unix listener removes its socket file
	}
	if s.lock != nil {
		// The lock file stays: removing it could let a third process lock a new inode while
		// a second still waits on the old one.
		unlock(s.lock)
		s.lock.Close()
	}
}
