//go:build !js

package ipc

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/signal"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"
)

// helperEnv makes the test binary act as the helper: "serve --socket S" serves a scripted
// Service on S (see helperMain).
const helperEnv = "HUBSCOPE_IPC_TEST_HELPER"

func TestMain(m *testing.M) {
	if os.Getenv(helperEnv) == "1" {
		os.Exit(helperMain(os.Args[1:]))
	}
	os.Exit(m.Run())
}

// helperMain is the stand-in helper. Each start appends its pid to starts.txt beside the
// socket. The first generation runs job j1 without end; a later one (a restart after a crash)
// reports j1 as interrupted, as the daemon does for a job it did not finish. It exits after
// two seconds without clients, as the daemon's idle exit does.
func helperMain(args []string) int {
	if len(args) < 3 || args[0] != "serve" || args[1] != "--socket" {
		fmt.Fprintf(os.Stderr, "test helper: want serve --socket S, got %q\n", args)
		return 2
	}
	sock := args[2]
	starts := filepath.Join(filepath.Dir(sock), "starts.txt")
	f, err := os.OpenFile(starts, os.O_WRONLY|os.O_CREATE|os.O_APPEND, 0o600)
	if err != nil {
		fmt.Fprintln(os.Stderr, "test helper:", err)
		return 1
	}
	fmt.Fprintf(f, "%d\n", os.Getpid())
	f.Close()
	b, _ := os.ReadFile(starts)
	generation := strings.Count(string(b), "\n")
	// Take a while to come up, as a real helper probing its GPU does, so that concurrent
	// Connects overlap.
	time.Sleep(300 * time.Millisecond)

	svc := newScripted()
	svc.gap = 20 * time.Millisecond
	j1 := svc.jobs["j1"]
	if generation == 1 {
		svc.script["j1"] = svc.script["j1"][:3] // then silence: the job runs on
	} else {
		j1.State, j1.Error = JobInterrupted, "the helper stopped while the job ran"
		svc.jobs["j1"] = j1
		svc.script["j1"] = []Event{{Seq: 0, Job: j1}}
	}
	srv, err := NewServer(svc, ServerOptions{Socket: sock, Handler: HandlerOptions{Logger: quietLogger()}})
	if err != nil {
		fmt.Fprintln(os.Stderr, "test helper:", err)
		return 1
	}
	go srv.Serve()
	fmt.Printf("test helper generation %d serving on %s\n", generation, sock)
	sig := make(chan os.Signal, 1)
	signal.Notify(sig, syscall.SIGTERM, os.Interrupt)
	tick := time.NewTicker(100 * time.Millisecond)
	defer tick.Stop()
	for {
		select {
		case <-sig:
			srv.Close()
			return 0
		case <-tick.C:
			if since, idle := srv.Idle(); idle && time.Since(since) > 2*time.Second {
				srv.Close()
				return 0
			}
		}
	}
}

// helperPids reads the pids the stand-in helpers wrote.
func helperPids(t *testing.T, dir string) []int {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(dir, "starts.txt"))
	if err != nil {
		return nil
	}
	var pids []int
	for _, f := range strings.Fields(string(b)) {
		p, err := strconv.Atoi(f)
		if err != nil {
			t.Fatalf("starts.txt: %q", b)
		}
		pids = append(pids, p)
	}
	return pids
}

// launchSetup prepares a socket path and stops every helper the test started when it ends.
func launchSetup(t *testing.T) (LaunchOptions, string) {
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	t.Setenv(helperEnv, "1")
	dir := filepath.Join(t.TempDir(), "run")
	t.Cleanup(func() {
		for _, pid := range helperPids(t, dir) {
			syscall.Kill(pid, syscall.SIGKILL)
		}
	})
	return LaunchOptions{Socket: filepath.Join(dir, "helper.sock"), HelperPath: exe, Timeout: 30 * time.Second}, dir
}

func TestConnectStartsOneHelper(t *testing.T) {
	opts, dir := launchSetup(t)
	var wg sync.WaitGroup
	clients := make([]*Client, 2)
	errs := make([]error, 2)
	for k := range clients {
		wg.Add(1)
		go func() {
			defer wg.Done()
			clients[k], errs[k] = Connect(context.Background(), opts)
		}()
	}
	wg.Wait()
	for k, err := range errs {
		if err != nil {
			t.Fatalf("connect %d: %v", k, err)
		}
		info, err := clients[k].Info(context.Background())
		if err != nil || info.Transport != "unix" {
			t.Fatalf("connect %d: info %+v, %v", k, info, err)
		}
		defer clients[k].Close()
	}
	if pids := helperPids(t, dir); len(pids) != 1 {
		t.Fatalf("%d helpers started (pids %v), want 1", len(pids), pids)
	}
	// Its output went to the log beside the socket, private to the user.
	fi, err := os.Stat(filepath.Join(dir, "helper.log"))
	if err != nil || fi.Mode().Perm() != 0o600 {
		t.Fatalf("helper log: %v, %v", fi, err)
	}
	b, _ := os.ReadFile(filepath.Join(dir, "helper.log"))
	if !strings.Contains(string(b), "test helper generation 1 serving on") {
		t.Fatalf("helper log: %q", b)
	}
	// A third Connect finds the running helper and starts nothing.
	c3, err := Connect(context.Background(), opts)
	if err != nil {
		t.Fatal(err)
	}
	c3.Close()
	if pids := helperPids(t, dir); len(pids) != 1 {
		t.Fatalf("a Connect to a live helper started another: pids %v", pids)
	}
}

// A crashed helper is started again by Follow, and the job it reports interrupted ends the
// follow with that event.
func TestFollowRestartsCrashedHelper(t *testing.T) {
	opts, dir := launchSetup(t)
	c, err := Connect(context.Background(), opts)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	got := make(chan Event, 100)
	errc := make(chan error, 1)
	go func() { errc <- c.Follow(context.Background(), "j1", func(ev Event) { got <- ev }) }()
	for k := 0; k < 3; k++ {
		if ev := <-got; ev.Job.State != JobRunning {
			t.Fatalf("event %d: %+v", k, ev.Job)
		}
	}
	pids := helperPids(t, dir)
	if len(pids) != 1 {
		t.Fatalf("pids %v", pids)
	}
	if err := syscall.Kill(pids[0], syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	if err := <-errc; err != nil {
		t.Fatal(err)
	}
	close(got)
	var last Event
	for ev := range got {
		last = ev
	}
	if last.Job.State != JobInterrupted || last.Job.Error == "" {
		t.Fatalf("follow ended with %+v, want the interrupted job", last.Job)
	}
	if pids := helperPids(t, dir); len(pids) != 2 {
		t.Fatalf("helpers started: %v, want the first and one restart", pids)
	}
}

func TestConnectFailures(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "run")
	// Nothing to start.
	_, err := Connect(context.Background(), LaunchOptions{Socket: filepath.Join(dir, "helper.sock")})
	if !errors.Is(err, ErrUnreachable) || !strings.Contains(err.Error(), "no helper program") {
		t.Fatalf("connect with no helper program: %v", err)
	}
	// A helper that exits at once: the error says so and quotes its log.
	script := filepath.Join(t.TempDir(), "broken-helper")
	os.WriteFile(script, []byte("#!/bin/sh\necho 'cannot open the GPU' >&2\nexit 3\n"), 0o700)
	_, err = Connect(context.Background(), LaunchOptions{Socket: filepath.Join(dir, "helper.sock"), HelperPath: script, Timeout: 30 * time.Second})
	if err == nil || !strings.Contains(err.Error(), "exited before answering") || !strings.Contains(err.Error(), "cannot open the GPU") {
		t.Fatalf("connect to a helper that dies: %v", err)
	}
	// A program that is not there.
	_, err = Connect(context.Background(), LaunchOptions{Socket: filepath.Join(dir, "helper.sock"), HelperPath: filepath.Join(dir, "missing")})
	if err == nil || !strings.Contains(err.Error(), "starting the helper") {
		t.Fatalf("connect with a missing program: %v", err)
	}
}

// TestConnectFallback: a CUDA build that cannot start (here a script failing as the dynamic
// loader does without libcuda.so.1) gives way to the fallback helper, and the log says so;
// a missing primary program falls back too; both failing names both.
func TestConnectFallback(t *testing.T) {
	opts, dir := launchSetup(t)
	cudaBuild := filepath.Join(t.TempDir(), "hubscope-helper-cuda")
	os.WriteFile(cudaBuild, []byte("#!/bin/sh\necho 'hubscope-helper-cuda: error while loading shared libraries: libcuda.so.1: cannot open shared object file' >&2\nexit 127\n"), 0o700)
	fallback := opts.HelperPath
	for _, primary := range []string{cudaBuild, filepath.Join(dir, "missing-cuda-build")} {
		opts.HelperPath, opts.Fallback = primary, fallback
		c, err := Connect(context.Background(), opts)
		if err != nil {
			t.Fatalf("primary %s: %v", primary, err)
		}
		if _, err := c.Info(context.Background()); err != nil {
			t.Fatal(err)
		}
		c.Close()
		log, _ := os.ReadFile(logPath(opts.Socket))
		if !strings.Contains(string(log), "starting "+fallback+" instead") {
			t.Fatalf("the log does not record the fallback:\n%s", log)
		}
		for _, pid := range helperPids(t, dir) { // the next round starts from no helper
			syscall.Kill(pid, syscall.SIGKILL)
		}
		os.Remove(filepath.Join(dir, "starts.txt"))
		waitGone(t, opts.Socket)
	}
	opts.HelperPath, opts.Fallback = cudaBuild, cudaBuild
	_, err := Connect(context.Background(), opts)
	if err == nil || !strings.Contains(err.Error(), "fallback helper failed too") || !strings.Contains(err.Error(), "libcuda.so.1") {
		t.Fatalf("both failing: %v", err)
	}
}

// waitGone waits until nothing answers on the socket any more.
func waitGone(t *testing.T, socket string) {
	t.Helper()
	c := NewUnixClient(socket)
	defer c.Close()
	for range 200 {
		if ping(context.Background(), c) != nil {
			return
		}
		time.Sleep(10 * time.Millisecond)
	}
	t.Fatalf("a helper still answers on %s", socket)
}
