package scan

import (
	"context"
	"errors"
	"fmt"
	"io"

	"github.com/hubscope/hubscope/helper/progress"
	"github.com/hubscope/hubscope/helper/timeseries"
)

// A plain time-series matrix (ROI-level networks) is read by package timeseries; here it
// becomes a Scan with an identity affine, no TR, its file's digest, and its constant or
// non-finite rows dropped (with their labels) as voxels' are.

// loadMatrix reads a CSV/TSV/whitespace matrix, or a 2D .npy array when npy is set (rows =
// regions, columns = time).
func loadMatrix(ctx context.Context, path string, npy bool, rep progress.Reporter) (*Scan, error) {
	f, err := openInput(path)
	if err != nil {
		return nil, err // *fs.PathError: "open PATH: …"
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil {
		return nil, err // *fs.PathError: "open PATH: …"
	}
	hr := newHashingReader(f)
	var m *timeseries.Matrix
	var read int64
	if npy {
		m, err = timeseries.ReadNPY(ctx, hr, st.Size(), rep)
		if err == nil {
			read = m.DataBytes
		}
	} else {
		rep.Start("load", st.Size())
		cr := &countingReader{r: hr, rep: rep}
		m, err = timeseries.ReadText(ctx, cr)
		read = cr.n
	}
	if err != nil {
		return nil, matrixError(ctx, path, err)
	}
	d, err := hr.finish(path) // trailing bytes after the data are hashed too
	if err != nil {
		return nil, err
	}
	s := &Scan{Data: m.Data, N: m.Rows, L: m.Cols, Source: path, TRSource: matrixTR, Labels: m.Labels, BytesRead: read, Passes: 1, Inputs: []FileDigest{d}}
	s.Affine = identityAffine()
	return finishMatrix(s, rep)
}

// matrixError names the file in a reader's error ("load PATH: …" for a cancellation).
func matrixError(ctx context.Context, path string, err error) error {
	if ctx.Err() != nil && errors.Is(err, ctx.Err()) {
		return fmt.Errorf("load %s: %w", path, err)
	}
	return fmt.Errorf("%s: %w", path, err)
}

// countingReader counts the bytes read and reports them as progress units.
type countingReader struct {
	r   io.Reader
	n   int64
	rep progress.Reporter
}

func (c *countingReader) Read(p []byte) (int, error) {
	n, err := c.r.Read(p)
	c.n += int64(n)
	if n > 0 {
		c.rep.Add(int64(n))
	}
	return n, err
}

func identityAffine() [4][4]float64 {
	return [4][4]float64{{1, 0, 0, 0}, {0, 1, 0, 0}, {0, 0, 1, 0}, {0, 0, 0, 1}}
}

// finishMatrix checks L, drops bad series (with their labels) and reports.
func finishMatrix(s *Scan, rep progress.Reporter) (*Scan, error) {
	if s.L < 3 {
		return nil, fmt.Errorf("%s: %d time points (columns); at least 3 are needed for a correlation", s.Source, s.L)
	}
	s.Dropped.MaskVoxels = s.N
	kept, st := dropBadSeries(s.Data, s.N, s.L)
	s.Dropped.ZeroVariance, s.Dropped.NonFinite = st.ZeroVariance, st.NonFinite
	if len(kept) == 0 {
		return nil, fmt.Errorf("%s: every one of the %d series is constant or has NaN/Inf values", s.Source, s.N)
	}
	if s.Labels != nil {
		for w, v := range kept {
			s.Labels[w] = s.Labels[v]
		}
		s.Labels = s.Labels[:len(kept)]
	}
	s.N = len(kept)
	s.Data = s.Data[:s.N*s.L]
	noteDropped(rep, s.Source, "rows", s.Dropped)
	return s, nil
}

// matrixTR is the TR statement of a plain regions × time matrix, which has no header.
const matrixTR = "TR unknown (a time-series matrix carries no timing)"
