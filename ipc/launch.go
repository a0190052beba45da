//go:build !js

package ipc

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"time"
)

// DefaultLaunchTimeout is how long Connect waits for a helper it started to answer.
const DefaultLaunchTimeout = 20 * time.Second

// LaunchOptions say where the helper listens and how to start it when none answers.
type LaunchOptions struct {
	// Socket is the helper's Unix socket; "" = DefaultSocketPath().
	Socket string
	// HelperPath is the hubscope-helper program, started as
	// "HelperPath serve --socket Socket Args…"; "" = connect only, never start one.
	HelperPath string
	// Fallback, if set, is started the same way when HelperPath cannot be started or exits
	// before answering: the CPU build behind the CUDA build, which on a machine without the
	// NVIDIA driver (no libcuda.so.1) stops in the dynamic loader before its main runs, so it
	// cannot fall back to the CPU by itself.
	Fallback string
	// Args follow "serve --socket Socket" on the helper's command line.
	Args []string
	// Timeout bounds the wait for a started helper to answer; 0 = DefaultLaunchTimeout.
	Timeout time.Duration
}

// pingTimeout bounds one "is a helper there?" question.
const pingTimeout = 2 * time.Second

// Connect returns a client of the helper answering on the socket. When none answers it
// starts one (detached: its own session, output appended to a log file beside the socket)
// and waits until it answers GET /v1/info. A lock file beside the socket makes two apps that
// connect at the same moment start one helper between them. The client's Follow uses the
// same options to start the helper again after a crash.
func Connect(ctx context.Context, opts LaunchOptions) (*Client, error) {
	if opts.Socket == "" {
		opts.Socket = DefaultSocketPath()
	}
	if opts.Timeout <= 0 {
		opts.Timeout = DefaultLaunchTimeout
	}
	c := NewUnixClient(opts.Socket)
	if err := ensureHelper(ctx, c, opts); err != nil {
		c.Close()
		return nil, err
	}
	if opts.HelperPath != "" {
		c.relaunch = func(ctx context.Context) error { return ensureHelper(ctx, c, opts) }
	}
	return c, nil
}

// ping asks the helper for its Info, briefly.
func ping(ctx context.Context, c *Client) error {
	ctx, cancel := context.WithTimeout(ctx, pingTimeout)
	defer cancel()
	_, err := c.Info(ctx)
	return err
}

// ensureHelper returns once a helper answers on the socket, starting one if needed.
func ensureHelper(ctx context.Context, c *Client, opts LaunchOptions) error {
	err := ping(ctx, c)
	var e *Error
	switch {
	case err == nil, errors.As(err, &e):
		return nil // a helper answered (an error answer still means one is there)
	case !errors.Is(err, ErrUnreachable):
		return err // the caller's context ended
	}
	if opts.HelperPath == "" {
		return fmt.Errorf("no helper answers at %s, and no helper program was given to start one: %w", opts.Socket, err)
	}
	if err := socketDir(opts.Socket); err != nil {
		return err
	}
	deadline := time.Now().Add(opts.Timeout)
	lock, err := waitLock(ctx, opts.Socket+".launch", deadline)
	if err != nil {
		return err
	}
	defer func() {
		unlock(lock)
		lock.Close()
	}()
	// Whoever held the lock before us may have started one.
	if ping(ctx, c) == nil {
		return nil
	}
	return startHelper(ctx, c, opts, deadline)
}

// waitLock takes the launch lock, polling (flock cannot wait on a context).
func waitLock(ctx context.Context, path string, deadline time.Time) (*os.File, error) {
	f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE, 0o600)
	if err != nil {
		return nil, fmt.Errorf("helper launch lock: %w", err)
	}
	for {
		busy, err := tryLock(f)
		if err != nil {
			f.Close()
			return nil, fmt.Errorf("helper launch lock %s: %w", path, err)
		}
		if !busy {
			return f, nil
		}
		if time.Now().After(deadline) {
			f.Close()
			return nil, fmt.Errorf("helper launch lock %s: still held by another process after waiting", path)
		}
		select {
		case <-ctx.Done():
			f.Close()
			return nil, ctx.Err()
		case <-time.After(25 * time.Millisecond):
		}
	}
}

// logPath is the helper's log file: beside the socket, named after it (helper.log).
func logPath(socket string) string {
	return filepath.Join(filepath.Dir(socket), strings.TrimSuffix(filepath.Base(socket), ".sock")+".log")
}

// startHelper starts opts.HelperPath, or opts.Fallback when that one cannot start or dies
// before answering, and waits for an answer.
func startHelper(ctx context.Context, c *Client, opts LaunchOptions, deadline time.Time) error {
	err := startProgram(ctx, c, opts, opts.HelperPath, deadline)
	var early *earlyExit
	if err == nil || opts.Fallback == "" || !errors.As(err, &early) {
		return err
	}
	if log, lerr := os.OpenFile(logPath(opts.Socket), os.O_WRONLY|os.O_CREATE|os.O_APPEND, 0o600); lerr == nil {
		fmt.Fprintf(log, "--- %s: %s did not come up (%v); starting %s instead\n", time.Now().Format(time.RFC3339), opts.HelperPath, early.err, opts.Fallback)
		log.Close()
	}
	if err2 := startProgram(ctx, c, opts, opts.Fallback, deadline); err2 != nil {
		return fmt.Errorf("%w; the fallback helper failed too: %w", err, err2)
	}
	return nil
}

// earlyExit is a helper program that could not be started or exited before answering.
type earlyExit struct {
	msg string
	err error
}

func (e *earlyExit) Error() string { return e.msg }
func (e *earlyExit) Unwrap() error { return e.err }

func startProgram(ctx context.Context, c *Client, opts LaunchOptions, program string, deadline time.Time) error {
	lp := logPath(opts.Socket)
	log, err := os.OpenFile(lp, os.O_WRONLY|os.O_CREATE|os.O_APPEND, 0o600)
	if err != nil {
		return fmt.Errorf("helper log: %w", err)
	}
	fmt.Fprintf(log, "--- %s: started by pid %d\n", time.Now().Format(time.RFC3339), os.Getpid())
	// Not CommandContext: the helper outlives the request (and the app) that started it.
	cmd := exec.Command(program, append([]string{"serve", "--socket", opts.Socket}, opts.Args...)...)
	cmd.Stdout, cmd.Stderr = log, log
	detach(cmd)
	err = cmd.Start()
	log.Close()
	if err != nil {
		return &earlyExit{fmt.Sprintf("starting the helper %s: %v", program, err), err}
	}
	// Reap it whenever it exits (else a crashed helper stays a zombie while the app runs),
	// and learn here if it exits before answering.
	exited := make(chan error, 1)
	go func() { exited <- cmd.Wait() }()
	for {
		if ping(ctx, c) == nil {
			return nil
		}
		select {
		case err := <-exited:
			return &earlyExit{fmt.Sprintf("the helper %s exited before answering on %s (%v); its log %s ends:\n%s", program, opts.Socket, err, lp, logTail(lp)), err}
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(25 * time.Millisecond):
		}
		if time.Now().After(deadline) {
			// A helper that never answers would only hold the socket against the next try.
			cmd.Process.Kill()
			return fmt.Errorf("the helper %s (pid %d) did not answer on %s within %v; its log %s ends:\n%s", program, cmd.Process.Pid, opts.Socket, opts.Timeout, lp, logTail(lp))
		}
	}
}

// logTail returns the last lines of the helper's log, for error messages.
func logTail(path string) string {
	f, err := os.Open(path)
	if err != nil {
		return "(" + err.Error() + ")"
	}
	defer f.Close()
	const n = 2048
	if fi, err := f.Stat(); err == nil && fi.Size() > n {
		f.Seek(fi.Size()-n, io.SeekStart)
	}
	b, _ := io.ReadAll(f)
	return strings.TrimSpace(string(b))
}
