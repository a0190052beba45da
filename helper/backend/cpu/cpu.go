// Package cpu is HubScope's pure-Go connectivity backend: blocked fp32 matrix products over
// pre-packed panels with a register-blocked micro-kernel (AVX2/FMA assembly on amd64, portable
// Go elsewhere or with -tags purego), Kendall τ-b by popcount over sign bit planes, and the
// threshold, histogram or top-K applied to each 6×16 tile as soon as it is computed, so no
// block of values ever exists in memory. Work is spread over runtime.GOMAXPROCS workers.
package cpu

import (
	"context"
	"fmt"
	"math"
	"os"
	"runtime"
	"strings"
	"sync"
	"sync/atomic"

	"github.com/hubscope/hubscope/helper/fc"
)

// Micro-tile shape: mr rows × nr columns of values per kernel call (BLIS-style register
// blocking: 12 ymm accumulators, 2 for B, 1 broadcast).
const (
	mr = 6
	nr = 16
)

// DefaultBudget is the host memory a block's results may take (256 MiB).
const DefaultBudget = 256 << 20

// Options configure a Backend.
type Options struct {
	// Workers is the number of goroutines computing tiles (0: runtime.GOMAXPROCS(0)).
	Workers int
	// Budget bounds the bytes one block's edges may take, which sizes BlockRows (0: DefaultBudget).
	Budget int64
}

// Backend computes block pairs on the CPU. It is not safe for concurrent Prepare/Run calls.
type Backend struct {
	workers int
	budget  int64
	forced  int

	n, l int
	m    fc.Measure
	// Pearson, Spearman: unit rows packed in mr-row panels (pa: [panel][k][mr]) and in nr-row
	// panels (pb: [panel][k][nr]), zero-padded past N.
	pa, pb []float32
	// Kendall: sign bit planes, words per row, non-zero counts.
	pos, neg []uint64
	words    int
	cnt      []int64
	// Incremental sliding windows (sliding.go).
	sliding *fc.SlidingCPU
}

// New returns a CPU backend.
func New(o Options) *Backend {
	b := &Backend{workers: o.Workers, budget: o.Budget}
	if b.workers <= 0 {
		b.workers = runtime.GOMAXPROCS(0)
	}
	if b.budget <= 0 {
		b.budget = DefaultBudget
	}
	return b
}

func (b *Backend) Name() string { return "cpu" }

// Device names the processor and the kernel in use.
func (b *Backend) Device() string {
	return fmt.Sprintf("%s, %d workers, %s kernel", cpuModel(), b.workers, kernelName)
}

func cpuModel() string {
	data, err := os.ReadFile("/proc/cpuinfo")
	if err == nil {
		for _, line := range strings.Split(string(data), "\n") {
			if k, v, ok := strings.Cut(line, ":"); ok && strings.TrimSpace(k) == "model name" {
				return strings.TrimSpace(v)
			}
		}
	}
	return runtime.GOARCH
}

// SetBlockRows forces the block height (0 restores the budget's choice).
func (b *Backend) SetBlockRows(h int) { b.forced = h }

// BlockRows is the largest multiple of 48 rows whose worst-case block (every pair an edge of
// 12 bytes) fits the budget, and at least 48.
func (b *Backend) BlockRows() int {
	if b.forced > 0 {
		return b.forced
	}
	h := int(math.Sqrt(float64(b.budget) / 12))
	h = max(48, h/48*48)
	if b.n > 0 {
		h = min(h, (b.n+47)/48*48)
	}
	return h
}

// ChecksSeries implements fc.SeriesChecker: Prepare runs fc.CheckSeries itself, so fc.Build
// does not read the series once more before it.
func (b *Backend) ChecksSeries() bool { return true }

// Prepare validates the series and builds the measure's packed representation.
func (b *Backend) Prepare(ctx context.Context, x []float32, n, l int, m fc.Measure) error {
	if err := fc.CheckSeries(x, n, l); err != nil {
		return err
	}
	if m > fc.Kendall {
		return fmt.Errorf("cpu: unknown measure %d", m)
	}
	b.Close()
	b.n, b.l, b.m = n, l, m
	if m == fc.Kendall {
		b.words = (fc.SignPairs(l) + 63) / 64
		b.pos = make([]uint64, n*b.words)
		b.neg = make([]uint64, n*b.words)
		b.cnt = make([]int64, n)
		return b.parallelRows(ctx, n, func(i int, _ *rowScratch) {
			w := b.words
			b.cnt[i] = fc.SignBitPlanes(b.pos[i*w:(i+1)*w], b.neg[i*w:(i+1)*w], x[i*l:(i+1)*l])
		})
	}
	np := (n + mr - 1) / mr
	nq := (n + nr - 1) / nr
	b.pa = make([]float32, np*mr*l)
	b.pb = make([]float32, nq*nr*l)
	return b.parallelRows(ctx, n, func(i int, s *rowScratch) {
		row := x[i*l : (i+1)*l]
		if m == fc.Spearman {
			s.rk.Ranks(s.ranks, row)
			row = s.ranks
		}
		fc.NormalizeRow(s.unit, row)
		pa := b.pa[(i/mr)*mr*l:]
		pb := b.pb[(i/nr)*nr*l:]
		for k, v := range s.unit {
			pa[k*mr+i%mr] = v
			pb[k*nr+i%nr] = v
		}
	})
}

type rowScratch struct {
	rk          fc.Ranker
	ranks, unit []float32
}

// parallelRows runs f for every row over the workers (rows write disjoint packed entries).
func (b *Backend) parallelRows(ctx context.Context, n int, f func(i int, s *rowScratch)) error {
	var next atomic.Int64
	var wg sync.WaitGroup
	const chunk = 256
	for w := 0; w < b.workers; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			s := &rowScratch{ranks: make([]float32, b.l), unit: make([]float32, b.l)}
			for ctx.Err() == nil {
				i0 := int(next.Add(chunk)) - chunk
				if i0 >= n {
					return
				}
				for i := i0; i < min(i0+chunk, n); i++ {
					f(i, s)
				}
			}
		}()
	}
	wg.Wait()
	return ctx.Err()
}

// Close releases the prepared data.
func (b *Backend) Close() error {
	b.pa, b.pb, b.pos, b.neg, b.cnt = nil, nil, nil, nil, nil
	b.sliding = nil
	b.n, b.l = 0, 0
	return nil
}
