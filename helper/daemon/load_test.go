package daemon

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"log/slog"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"runtime/debug"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/hubscope/hubscope/ipc"
	"github.com/hubscope/hubscope/ipc/ipctest"
)

// serveDaemon serves d on a fresh Unix socket (loopback only) and shuts it down with the test.
func serveDaemon(t *testing.T, d *Daemon) string {
	t.Helper()
	sock := filepath.Join(t.TempDir(), "run", "helper.sock")
	srv, err := ipc.NewServer(d, ipc.ServerOptions{Socket: sock, Handler: ipc.HandlerOptions{Logger: slog.New(slog.NewTextHandler(io.Discard, nil))}})
	if err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- srv.Serve() }()
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		srv.Shutdown(ctx)
		<-done
	})
	return sock
}

// openFDs counts this process's open file descriptors.
func openFDs(t *testing.T) int {
	ents, err := os.ReadDir("/proc/self/fd")
	if err != nil {
		t.Skipf("no /proc/self/fd: %v", err)
	}
	return len(ents)
}

// rssBytes is this process's resident set after a collection that returns freed memory.
func rssBytes(t *testing.T) int64 {
	runtime.GC()
	debug.FreeOSMemory()
	b, err := os.ReadFile("/proc/self/status")
	if err != nil {
		t.Skipf("no /proc/self/status: %v", err)
	}
	for _, l := range strings.Split(string(b), "\n") {
		if f := strings.Fields(l); len(f) == 3 && f[0] == "VmRSS:" {
			kb, _ := strconv.ParseInt(f[1], 10, 64)
			return kb << 10
		}
	}
	t.Skip("no VmRSS")
	return 0
}

// settle waits (bounded) until the goroutine and descriptor counts are back within slack of
// their baselines, and fails naming what stayed.
func settle(t *testing.T, goroutines, fds, slack int) {
	t.Helper()
	deadline := time.Now().Add(20 * time.Second)
	for {
		g, f := runtime.NumGoroutine(), openFDs(t)
		if g <= goroutines+slack && f <= fds+slack {
			return
		}
		if time.Now().After(deadline) {
			buf := make([]byte, 1<<20)
			t.Fatalf("goroutines %d (baseline %d), descriptors %d (baseline %d):\n%s", g, goroutines, f, fds, buf[:runtime.Stack(buf, true)])
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// prober is a process of its own (the test binary again, see loadClientMain's "probe")
// that calls info every 25 ms until its standard input closes, as an app polls the helper.
// In the daemon's process its client goroutines would wait in the daemon's run queue behind
// the jobs' workers, and the latency measured would be the test's own scheduling twice over.
type prober struct {
	cmd   *exec.Cmd
	stdin io.WriteCloser
	out   *bufio.Reader
}

func startProber(t *testing.T, sock string) *prober {
	t.Helper()
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), loadEnv+"="+strings.Join([]string{"probe", sock, "0", ""}, "\n"))
	cmd.Stderr = os.Stderr
	stdin, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	p := &prober{cmd: cmd, stdin: stdin, out: bufio.NewReader(stdout)}
	// The prober says "ready" after its first answered call: the phase starts measured.
	if l, err := p.out.ReadString('\n'); err != nil || l != "ready\n" {
		cmd.Process.Kill()
		cmd.Wait()
		t.Fatalf("prober: %q %v", l, err)
	}
	return p
}

// check stops the prober, logs the phase's info latencies (p50, p95, max: the figures of
// RELIABILITY.md) and asserts issue 17's goal on them: every call answered, and the 95th
// percentile under infoBound. The 95th percentile rather than the maximum: on a machine
// shared with other work, one call in a phase may wait out another process's time slice.
func (p *prober) check(t *testing.T, phase string) {
	t.Helper()
	p.stdin.Close()
	var times []time.Duration
	var fails []string
	for {
		l, err := p.out.ReadString('\n')
		if err != nil {
			break
		}
		if ns, ok := strings.CutPrefix(strings.TrimSpace(l), "ok "); ok {
			d, _ := strconv.ParseInt(ns, 10, 64)
			times = append(times, time.Duration(d))
		} else {
			fails = append(fails, strings.TrimSpace(l))
		}
	}
	if err := p.cmd.Wait(); err != nil {
		t.Errorf("%s: prober: %v", phase, err)
	}
	if len(fails) > 0 {
		t.Errorf("%s: %d info calls failed, first: %v", phase, len(fails), fails[0])
	}
	if len(times) == 0 {
		t.Errorf("%s: no info call answered", phase)
		return
	}
	slices.Sort(times)
	p95 := times[len(times)*95/100]
	t.Logf("%-28s info: %4d calls, p50 %6.1f ms, p95 %6.1f ms, max %6.1f ms", phase, len(times),
		ms(times[len(times)/2]), ms(p95), ms(times[len(times)-1]))
	if bound, load := loadedBound(); p95 >= bound {
		t.Errorf("%s: info p95 %.1f ms, want < %.0f ms (load average %.1f on %d cores)", phase, ms(p95), ms(bound), load, runtime.NumCPU())
	}
}

// loadedBound is infoBound on a machine with at most two runnable tasks per core (load
// average over the last minute), and proportionally more beyond: the goal is the daemon's
// own latency, and on a machine shared with other work each wake-up of the daemon's threads
// waits behind the other tasks' time slices, so the latency grows with the tasks per core
// (measured on 2 cores at load 21: the streams phase's p95 went from 46 ms at load 12 to 121
// ms, while a CPU profile showed the daemon's process using 0.39 CPU-s in that 1.7 s phase,
// job included: the rest of the latency is waiting for a core). CI's machine runs this
// package beside at most one other (go test -p 2) and gets the bound itself.
func loadedBound() (time.Duration, float64) {
	load := 0.0
	if b, err := os.ReadFile("/proc/loadavg"); err == nil {
		if f := strings.Fields(string(b)); len(f) > 0 {
			load, _ = strconv.ParseFloat(f[0], 64)
		}
	}
	return time.Duration(float64(infoBound) * max(1, load/float64(2*runtime.NumCPU()))), load
}

func ms(d time.Duration) float64 { return float64(d) / 1e6 }

// rawRequest sends one HTTP/1.1 request over the socket and returns the status code. The
// request is written while the answer is read: a server that refuses an oversized body
// answers and closes before the body is all sent.
func rawRequest(sock, text string) (int, error) {
	st, _, _, err := ipctest.Raw("unix", sock, text)
	return st, err
}

// loadScale is how much of the load a run applies: all of it normally, a tenth of
// the connection counts under -race (whose goroutines cost ~10× more).
func loadScale(n int) int {
	if raceEnabled || testing.Short() {
		return max(n/10, 5)
	}
	return n
}

// TestDaemonUnderLoad serves a real daemon on its socket and applies, in turn: 500
// concurrent connections, 50 slow (slowloris) clients, 10 jobs submitted at once with half
// cancelled, 1,000 event streams opened and dropped, and oversized and malformed bodies —
// while a prober calls info every 25 ms. The connections and the streams come from a second
// process (runLoadClient), as an app's would, and so does the prober. It asserts: every info
// call answers, and in every phase 95 % of them within infoBound (issue 17's 100 ms; see
// infoBound under -race, and loadedBound on a machine with more than two tasks per core);
// every job ends done or cancelled (none lost); every hostile request gets its error status;
// and goroutines and descriptors return to their baseline.
func TestDaemonUnderLoad(t *testing.T) {
	scanPath, maskPath := phantom(t, 12)
	d := newDaemon(t, filepath.Join(t.TempDir(), "results"))
	sock := serveDaemon(t, d)
	c := ipc.NewUnixClient(sock)
	defer c.Close()
	ctx := context.Background()
	if _, err := c.Info(ctx); err != nil {
		t.Fatal(err)
	}
	c.Close() // idle keep-alive connections are not part of the baseline
	baseG, baseFD := ipctest.StableGoroutines(), openFDs(t)
	const slack = 8

	// The same prober on the idle daemon: the reference for the phases' figures.
	idle := startProber(t, sock)
	time.Sleep(500 * time.Millisecond)
	idle.check(t, "idle")

	t.Run("concurrent connections", func(t *testing.T) {
		// Every connection is opened first, then all ask for info at once and stay open
		// (keep-alive) while the prober measures, then all close.
		p := startProber(t, sock)
		n := loadScale(500)
		runLoadClient(t, "connections", sock, n, "")
		p.check(t, fmt.Sprintf("%d connections", n))
	})

	t.Run("slowloris", func(t *testing.T) {
		p := startProber(t, sock)
		n := loadScale(50)
		var wg sync.WaitGroup
		for i := 0; i < n; i++ {
			wg.Add(1)
			go func() {
				defer wg.Done()
				conn, err := net.Dial("unix", sock)
				if err != nil {
					t.Error(err)
					return
				}
				defer conn.Close()
				io.WriteString(conn, "GET /v1/info HTTP/1.1\r\nHost: localhost\r\n")
				for k := 0; k < 15; k++ { // a header line every 100 ms, never the blank line
					time.Sleep(100 * time.Millisecond)
					if _, err := fmt.Fprintf(conn, "X-Slow-%d: x\r\n", k); err != nil {
						return
					}
				}
			}()
		}
		wg.Wait()
		p.check(t, fmt.Sprintf("%d slowloris clients", n))
	})

	t.Run("jobs with half cancelled", func(t *testing.T) {
		p := startProber(t, sock)
		var jobs []ipc.Job
		for i := 0; i < 10; i++ {
			j, err := c.Submit(ctx, ipc.JobRequest{Scan: scanPath, Mask: maskPath, Settings: settingsOf(`{"metrics": "none"}`)})
			if err != nil {
				t.Fatal(err)
			}
			jobs = append(jobs, j)
		}
		for i := 0; i < 10; i += 2 {
			if _, err := c.Cancel(ctx, jobs[i].ID); err != nil {
				t.Fatalf("cancel %s: %v", jobs[i].ID, err)
			}
		}
		waitTerminal(t, c, jobs)
		p.check(t, "10 jobs, 5 cancelled")
		for i, j := range jobs {
			got, err := c.Job(ctx, j.ID)
			if err != nil {
				t.Fatal(err)
			}
			want := ipc.JobDone
			if i%2 == 0 {
				want = ipc.JobCancelled
			}
			// A job may finish before its cancel arrives; it must never be lost or fail.
			if got.State != want && !(want == ipc.JobCancelled && got.State == ipc.JobDone) {
				t.Errorf("job %d (%s): %s %q, want %s", i, j.ID, got.State, got.Error, want)
			}
		}
		all, err := c.Jobs(ctx)
		if err != nil || len(all) != 10 {
			t.Errorf("job list: %d jobs (%v), want 10", len(all), err)
		}
	})

	t.Run("event streams dropped", func(t *testing.T) {
		p := startProber(t, sock)
		// A long job whose streams are opened, read once and dropped while it runs.
		long, err := c.Submit(ctx, ipc.JobRequest{Scan: scanPath, Mask: maskPath, Settings: settingsOf(`{"metrics": "full"}`)})
		if err != nil {
			t.Fatal(err)
		}
		n := loadScale(1000)
		runLoadClient(t, "streams", sock, n, long.ID)
		if _, err := c.Cancel(ctx, long.ID); err != nil {
			t.Fatal(err)
		}
		waitTerminal(t, c, []ipc.Job{long})
		p.check(t, fmt.Sprintf("%d event streams dropped", n))
	})

	t.Run("oversized and malformed bodies", func(t *testing.T) {
		p := startProber(t, sock)
		big := strings.Repeat(" ", 2<<20)
		for _, r := range []struct {
			name, body string
			status     int
		}{
			{"2 MiB", `{"scan":"x"` + big + `}`, 413},
			{"malformed", `{"scan":`, 400},
			{"unknown field", `{"scna":"x"}`, 400},
			{"two values", `{} {}`, 400},
			{"not JSON", "\x00\x01\x02", 400},
		} {
			req := fmt.Sprintf("POST /v1/jobs HTTP/1.1\r\nHost: localhost\r\nContent-Type: application/json\r\nContent-Length: %d\r\nConnection: close\r\n\r\n%s", len(r.body), r.body)
			code, err := rawRequest(sock, req)
			if err != nil || code != r.status {
				t.Errorf("%s body: status %d (%v), want %d", r.name, code, err, r.status)
			}
		}
		p.check(t, "hostile bodies")
	})

	c.Close()
	settle(t, baseG, baseFD, slack)
}

// waitTerminal polls the jobs until every one has ended (bounded).
func waitTerminal(t *testing.T, c *ipc.Client, jobs []ipc.Job) {
	t.Helper()
	deadline := time.Now().Add(5 * time.Minute)
	for _, j := range jobs {
		for {
			got, err := c.Job(context.Background(), j.ID)
			if err != nil {
				t.Fatal(err)
			}
			if got.State.Terminal() {
				break
			}
			if time.Now().After(deadline) {
				t.Fatalf("job %s still %s", j.ID, got.State)
			}
			time.Sleep(20 * time.Millisecond)
		}
	}
}

// TestDaemonSoak runs 100 small jobs (30 under -race) through one daemon over its socket:
// every one ends done, and the process's descriptors and resident memory after the last
// are no higher than after the first ten (beyond a small allowance for the allocator).
func TestDaemonSoak(t *testing.T) {
	dir := t.TempDir()
	matrix := filepath.Join(dir, "regions.csv")
	var sb strings.Builder
	for r := 0; r < 40; r++ {
		for c := 0; c < 60; c++ {
			if c > 0 {
				sb.WriteByte(',')
			}
			fmt.Fprintf(&sb, "%g", float64((r*7+c*13)%17)+0.1*float64(r%5)*float64(c))
		}
		sb.WriteByte('\n')
	}
	if err := os.WriteFile(matrix, []byte(sb.String()), 0o600); err != nil {
		t.Fatal(err)
	}
	d := newDaemon(t, filepath.Join(dir, "results"))
	sock := serveDaemon(t, d)
	c := ipc.NewUnixClient(sock)
	defer c.Close()
	ctx := context.Background()
	n := 100
	if raceEnabled || testing.Short() {
		n = 30
	}
	var fd10, fdEnd int
	var rss10, rssEnd int64
	for i := 0; i < n; i++ {
		j, err := c.Submit(ctx, ipc.JobRequest{Scan: matrix, Settings: settingsOf(`{"metrics": "basic"}`)})
		if err != nil {
			t.Fatal(err)
		}
		waitTerminal(t, c, []ipc.Job{j})
		if got, _ := c.Job(ctx, j.ID); got.State != ipc.JobDone {
			t.Fatalf("job %d: %s %q", i, got.State, got.Error)
		}
		if i == 9 {
			fd10, rss10 = openFDs(t), rssBytes(t)
		}
	}
	fdEnd, rssEnd = openFDs(t), rssBytes(t)
	t.Logf("%d jobs: descriptors %d after 10, %d after %d; RSS %.1f MB after 10, %.1f MB after %d", n, fd10, fdEnd, n, float64(rss10)/1e6, float64(rssEnd)/1e6, n)
	if fdEnd > fd10+4 {
		t.Errorf("descriptors grew from %d to %d over %d jobs", fd10, fdEnd, n-10)
	}
	if rssEnd > rss10+32<<20 {
		t.Errorf("resident memory grew from %.1f to %.1f MB over %d jobs", float64(rss10)/1e6, float64(rssEnd)/1e6, n-10)
	}
}
