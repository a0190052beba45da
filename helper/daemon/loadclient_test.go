package daemon

import (
	"cmp"
	"context"
	"fmt"
	"io"
	"net"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/hubscope/hubscope/ipc"
	"github.com/hubscope/hubscope/ipc/ipctest"
)

// loadEnv asks the test binary to act as a load-generating client (see loadClientMain).
// The load comes from another process, as the app's and any other client's requests do: a
// client inside the daemon's own process would put its hundreds of goroutines in the
// daemon's run queue, and the info latency measured would be the test's own scheduling,
// not the daemon's (with 100 in-process stream clients, info p95 was 130 ms on an idle
// 2-core machine; with the same clients in a second process, 36 ms at load 12).
const loadEnv = "HUBSCOPE_DAEMON_LOAD_CLIENT"

// infoGoal is issue 17's promise: info answers in under 100 ms while the daemon is loaded.
const infoGoal = 100 * time.Millisecond

// runLoadClient runs one load phase in a child process (bounded to two minutes) and fails
// the test with the child's words if the phase did not go as it should.
func runLoadClient(t *testing.T, phase, sock string, n int, job string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), loadEnv+"="+strings.Join([]string{phase, sock, strconv.Itoa(n), job}, "\n"))
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Errorf("%s: load client: %v\n%s", phase, err, out)
	}
}

// loadClientMain runs when the test binary is re-executed as a load client: it applies the
// phase named in loadEnv to the daemon's socket, prints what went wrong and exits 1, or
// exits 0. It reports false when the binary is not a load client.
func loadClientMain() bool {
	arg := os.Getenv(loadEnv)
	if arg == "" {
		return false
	}
	f := strings.Split(arg, "\n")
	n, err := 0, fmt.Errorf("%s: want phase, socket, count and job", loadEnv)
	if len(f) == 4 {
		n, err = strconv.Atoi(f[2])
	}
	if err == nil {
		switch f[0] {
		case "connections":
			err = loadConnections(f[1], n)
		case "streams":
			err = loadStreams(f[1], n, f[3])
		case "probe":
			err = probe(f[1])
		default:
			err = fmt.Errorf("unknown load phase %q", f[0])
		}
	}
	if err != nil {
		fmt.Println(err)
		os.Exit(1)
	}
	os.Exit(0)
	return true
}

// loadConnections opens n connections first, then has every one ask for info at once, holds
// them all open (keep-alive) for half a second, and closes them.
func loadConnections(sock string, n int) error {
	conns := make([]net.Conn, 0, n)
	defer func() {
		for _, c := range conns {
			c.Close()
		}
	}()
	for i := 0; i < n; i++ {
		conn, err := net.DialTimeout("unix", sock, 10*time.Second)
		if err != nil {
			return fmt.Errorf("connection %d: %w", i, err)
		}
		conns = append(conns, conn)
	}
	var wg sync.WaitGroup
	var bad atomic.Int64
	for _, conn := range conns {
		wg.Add(1)
		go func() {
			defer wg.Done()
			conn.SetDeadline(time.Now().Add(60 * time.Second))
			io.WriteString(conn, "GET /v1/info HTTP/1.1\r\nHost: localhost\r\n\r\n")
			if code, err := ipctest.ReadStatus(conn); err != nil || code != 200 {
				bad.Add(1)
			}
		}()
	}
	wg.Wait()
	time.Sleep(500 * time.Millisecond) // all n held open
	if bad.Load() > 0 {
		return fmt.Errorf("%d of %d concurrent info requests failed", bad.Load(), n)
	}
	return nil
}

// loadStreams opens n event streams of the job, 100 at a time; each reads its first event
// and is dropped.
func loadStreams(sock string, n int, id string) error {
	c := ipc.NewUnixClient(sock)
	defer c.Close()
	var wg sync.WaitGroup
	sem := make(chan struct{}, 100)
	var opened atomic.Int64
	var mu sync.Mutex
	var first error
	for i := 0; i < n; i++ {
		wg.Add(1)
		sem <- struct{}{}
		go func() {
			defer func() { <-sem; wg.Done() }()
			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			ch, err := c.Events(ctx, id)
			if err != nil {
				mu.Lock()
				first = cmp.Or(first, err)
				mu.Unlock()
				return
			}
			if _, ok := <-ch; ok {
				opened.Add(1)
			}
			cancel() // drop the stream mid-way
			for range ch {
			}
		}()
	}
	wg.Wait()
	if opened.Load() != int64(n) {
		return fmt.Errorf("%d of %d streams delivered a first event (first error: %v)", opened.Load(), n, first)
	}
	return nil
}

// probe calls info every 25 ms until standard input closes, then once more, and prints one
// line per call: "ok NANOSECONDS" or the error. It prints "ready" after the first call has
// been answered (that one is not counted).
func probe(sock string) error {
	c := ipc.NewUnixClient(sock)
	defer c.Close()
	if _, err := c.Info(context.Background()); err != nil {
		return err
	}
	fmt.Println("ready")
	stop := make(chan struct{})
	go func() {
		io.Copy(io.Discard, os.Stdin)
		close(stop)
	}()
	call := func() {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		t0 := time.Now()
		if _, err := c.Info(ctx); err != nil {
			fmt.Println("error:", err)
		} else {
			fmt.Println("ok", time.Since(t0).Nanoseconds())
		}
	}
	tick := time.NewTicker(25 * time.Millisecond)
	defer tick.Stop()
	for {
		select {
		case <-stop:
			call() // one more as the phase ends, so that even a short phase is measured
			return nil
		case <-tick.C:
			call()
		}
	}
}
