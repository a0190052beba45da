package daemon

import (
	"context"
	"fmt"
	"math"
	"path/filepath"
	"runtime"
	"sync"
	"time"

	"github.com/hubscope/hubscope/helper/bundle"
	"github.com/hubscope/hubscope/helper/fc"
	"github.com/hubscope/hubscope/ipc"
)

// seedMatrix is a job's series normalised for Pearson correlation: row v is
// z_v = (x_v − mean(x_v)) / ‖x_v − mean(x_v)‖, so that r(u, v) = z_u · z_v.
type seedMatrix struct {
	n, l int
	z    []float32
}

// loadSeedMatrix reads series.npy once and normalises every row as fc does for Pearson.
func loadSeedMatrix(path string) (*seedMatrix, error) {
	r, err := bundle.OpenSeries(path)
	if err != nil {
		return nil, err
	}
	defer r.Close()
	x, err := r.ReadAll()
	if err != nil {
		return nil, err
	}
	m := &seedMatrix{n: r.N, l: r.L, z: x}
	for v := 0; v < m.n; v++ {
		row := x[v*m.l : (v+1)*m.l]
		fc.NormalizeRow(row, row) // the same unit rows the network was built from
		// A constant row cannot occur (the scan loader drops them); were it there, it
		// correlates with nothing: r = 0.
		if math.IsNaN(float64(row[0])) {
			clear(row)
		}
	}
	return m, nil
}

// correlate writes r(seed, v) for every node into r, on every core: each worker takes a
// contiguous range of rows (N·L multiply-adds in all, memory-bound: one pass over the matrix).
func (m *seedMatrix) correlate(seed int, r []float32) {
	zs := m.z[seed*m.l : (seed+1)*m.l]
	workers := min(runtime.GOMAXPROCS(0), max(1, m.n/4096))
	var wg sync.WaitGroup
	for w := 0; w < workers; w++ {
		lo, hi := m.n*w/workers, m.n*(w+1)/workers
		wg.Add(1)
		go func() {
			defer wg.Done()
			for v := lo; v < hi; v++ {
				r[v] = fc.Dot(zs, m.z[v*m.l:(v+1)*m.l])
			}
		}()
	}
	wg.Wait()
}

// seedEntry is one job's normalised series, loaded once however many ask at the same time (a
// seed click while the prefetch still reads).
type seedEntry struct {
	once  sync.Once
	ready chan struct{} // closed once loaded (or failed)
	m     *seedMatrix
	err   error
}

func newSeedEntry() *seedEntry { return &seedEntry{ready: make(chan struct{})} }

// seedMatrix returns the job's normalised series, reading series.npy on first use.
func (d *Daemon) seedMatrix(id string, v *bundleView) (*seedMatrix, error) {
	e := d.series.entry(id, newSeedEntry)
	e.load(v)
	return e.m, e.err
}

func (e *seedEntry) load(v *bundleView) {
	e.once.Do(func() {
		e.m, e.err = loadSeedMatrix(filepath.Join(v.dir, bundle.SeriesFile))
		close(e.ready)
	})
}

// prefetchSeeds reads a job's series for seed maps in the background when its summary is
// asked for (the app opens a result): the first click on a voxel then waits only for the
// correlation (~12 ms at 60,000 nodes) instead of also reading and normalising series.npy
// (110–260 ms, see BENCHMARKS.md), which the 100 ms for a seed map after a click
// would not allow.
func (d *Daemon) prefetchSeeds(id string, v *bundleView, files []ipc.FileInfo) {
	if d.opt.NoSeedPrefetch {
		return
	}
	for _, f := range files {
		if f.Name == bundle.SeriesFile {
			e := d.series.entry(id, newSeedEntry)
			go e.load(v)
			return
		}
	}
}

// node finds the node at a voxel of a finished job.
func (v *bundleView) node(id string, voxel [3]int) (int, error) {
	if v.ijk == nil {
		return 0, ipc.Errorf(ipc.CodeNotFound, "job %s analysed a time-series matrix: it has no voxels", id)
	}
	for a := 0; a < 3; a++ {
		if voxel[a] < 0 || voxel[a] >= v.dims[a] {
			return 0, ipc.Errorf(ipc.CodeBadRequest, "voxel %v lies outside the %d×%d×%d grid", voxel, v.dims[0], v.dims[1], v.dims[2])
		}
	}
	n := v.nodeOf[voxel[0]+v.dims[0]*(voxel[1]+v.dims[1]*voxel[2])]
	if n < 0 {
		return 0, ipc.Errorf(ipc.CodeNotFound, "voxel %v is outside the analysis mask", voxel)
	}
	return int(n), nil
}

// SeedMap correlates the seed voxel's series with every node's (Pearson r) and returns the
// map on the full grid, NaN outside the mask. The normalised series of the last few jobs stay
// in memory, so only the first map of a job reads series.npy.
func (d *Daemon) SeedMap(ctx context.Context, id string, voxel [3]int) (*ipc.Volume, error) {
	t0 := time.Now()
	v, _, err := d.view(id)
	if err != nil {
		return nil, err
	}
	seed, err := v.node(id, voxel)
	if err != nil {
		return nil, err
	}
	m, err := d.seedMatrix(id, v)
	if err != nil {
		return nil, fmt.Errorf("job %s: seed map: %w", id, err)
	}
	if m.n != v.n {
		return nil, fmt.Errorf("job %s: series.npy has %d rows for %d nodes", id, m.n, v.n)
	}
	r := make([]float32, m.n)
	m.correlate(seed, r)
	vol := &ipc.Volume{Header: v.header("seed"), Data: make([]float32, len(v.nodeOf))}
	nan := float32(math.NaN())
	for f, n := range v.nodeOf {
		if n >= 0 {
			vol.Data[f] = r[n]
		} else {
			vol.Data[f] = nan
		}
	}
	setRange(vol)
	vol.Header.Description = fmt.Sprintf("Pearson r with the series of voxel %d,%d,%d", voxel[0], voxel[1], voxel[2])
	vol.Header.Seed = &voxel
	vol.Header.Millis = float64(time.Since(t0).Microseconds()) / 1000
	return vol, nil
}

// Series returns one voxel's cleaned time series, read straight from series.npy.
func (d *Daemon) Series(ctx context.Context, id string, voxel [3]int) (ipc.Series, error) {
	v, _, err := d.view(id)
	if err != nil {
		return ipc.Series{}, err
	}
	n, err := v.node(id, voxel)
	if err != nil {
		return ipc.Series{}, err
	}
	r, err := bundle.OpenSeries(filepath.Join(v.dir, bundle.SeriesFile))
	if err != nil {
		return ipc.Series{}, fmt.Errorf("job %s: %w", id, err)
	}
	defer r.Close()
	s := ipc.Series{Voxel: voxel, Node: n, TR: v.tr, Values: make([]float32, r.L)}
	if err := r.Row(n, s.Values); err != nil {
		return ipc.Series{}, err
	}
	return s, nil
}
