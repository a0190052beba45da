package bundle

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/hubscope/hubscope/helper/internal/diskfault"
	"github.com/hubscope/hubscope/helper/network"
	"github.com/hubscope/hubscope/helper/scan"
	"github.com/hubscope/hubscope/ipc/schema"
)

// EdgeListMax is the largest network whose edges are also written as edges.tsv; beyond it the
// text file (≈ 25 bytes per edge) would dwarf network.npz and no one reads it by eye anyway.
const EdgeListMax = 1_000_000

// Marker is the file every committed bundle holds. Create(dir, true) replaces an existing
// directory only when it holds this file (or is empty), so a mistyped output path can never
// delete a folder of other data.
const Marker = ".hubscope-bundle"

// ownerFile, inside a partial directory, names the process writing it, so that the next
// Create of the same bundle can tell a crashed writer's leftovers from a live one.
const ownerFile = ".hubscope-partial-owner"

// A partial directory without a readable owner is taken for a crash's leftover once it is
// staleAfter old (a live writer creates the owner file right after the directory); one owned
// by a process on another host (a shared file system), which we cannot query, once it is
// staleForeignAfter old.
const (
	staleAfter        = time.Minute
	staleForeignAfter = 24 * time.Hour
)

// Writer writes one results bundle into a temporary sibling directory .BASE.partial-XXXX and
// renames it to its final name in Commit, so that a bundle directory, once it exists, is
// complete. Its methods may be called from several goroutines for different file names.
//
// A failed write poisons the Writer: Commit then refuses, removes the temporary directory and
// returns the first error, so an incomplete bundle can never be committed by oversight.
type Writer struct {
	dir       string // final path
	tmp       string // .BASE.partial-XXXX beside it
	overwrite bool

	// CompressNetwork deflates network.npz (numpy's savez_compressed) instead of storing its
	// members (numpy's savez). Both load with scipy.sparse.load_npz. Set it before
	// WriteNetwork. Deflate saves about a quarter of the file on random-data networks at 25×
	// the time (≈ 100 MB/s against ≈ 2.7 GB/s on one core), so files are stored by default.
	CompressNetwork bool

	// SymmetricNetwork writes network.npz as the whole symmetric matrix (every edge stored as
	// (i, j) and (j, i), twice the entries) instead of its strict upper triangle, for users who
	// load it straight into tools that expect A = Aᵀ. network.json says which either way.
	SymmetricNetwork bool

	mu   sync.Mutex
	err  error // first failed write
	done bool  // committed or aborted
}

// Create starts a bundle that Commit will place at dir. If dir exists, Create fails unless
// overwrite is set and dir is an earlier bundle (holds Marker) or empty. Leftover partial
// directories of the same bundle from crashed writers are removed. The parent directory is
// created if needed.
func Create(dir string, overwrite bool) (*Writer, error) {
	dir = filepath.Clean(dir)
	base := filepath.Base(dir)
	if base == "." || base == ".." || base == string(filepath.Separator) {
		return nil, fmt.Errorf("bundle %s: not a usable directory name", dir)
	}
	parent := filepath.Dir(dir)
	if err := os.MkdirAll(parent, 0o755); err != nil {
		return nil, fmt.Errorf("bundle %s: create parent directory: %w", dir, err)
	}
	if err := checkReplaceable(dir, overwrite); err != nil {
		return nil, err
	}
	removeStalePartials(parent, base)
	// The writer's PID is in the directory's name as well as in the owner file written
	// next: a writer killed between the two (kill -9 found that window) leaves a directory
	// the next Create can still tell is dead.
	tmp, err := diskfault.MkdirTemp(parent, "."+base+".partial-"+strconv.Itoa(os.Getpid())+"-")
	if err != nil {
		return nil, fmt.Errorf("bundle %s: create temporary directory: %w", dir, err)
	}
	host, _ := os.Hostname()
	owner := fmt.Sprintf("%d %s\n", os.Getpid(), host)
	if err := diskfault.WriteFile(filepath.Join(tmp, ownerFile), []byte(owner), 0o644); err != nil {
		os.RemoveAll(tmp)
		return nil, fmt.Errorf("bundle %s: %w", dir, err)
	}
	return &Writer{dir: dir, tmp: tmp, overwrite: overwrite}, nil
}

// ErrExists is Create's refusal of an existing directory without overwrite; callers add how
// their user allows it (the command line's --overwrite).
var ErrExists = errors.New("already exists")

// checkReplaceable fails if dir exists and may not be replaced.
func checkReplaceable(dir string, overwrite bool) error {
	fi, err := os.Lstat(dir)
	if errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("bundle %s: %w", dir, err)
	}
	if !overwrite {
		return fmt.Errorf("bundle %s %w; choose another output directory or allow overwriting", dir, ErrExists)
	}
	if !fi.IsDir() {
		return fmt.Errorf("bundle %s exists and is not a directory; refusing to replace it", dir)
	}
	if _, err := os.Stat(filepath.Join(dir, Marker)); err == nil {
		return nil
	}
	entries, err := os.ReadDir(dir)
	if err != nil {
		return fmt.Errorf("bundle %s: %w", dir, err)
	}
	if len(entries) > 0 {
		return fmt.Errorf("bundle %s exists and is not a HubScope bundle (no %s); refusing to replace it", dir, Marker)
	}
	return nil
}

// removeStalePartials deletes .BASE.partial-* directories whose writer is gone: its process no
// longer runs on this host, or it is too old to belong to a live writer (see staleAfter).
func removeStalePartials(parent, base string) {
	entries, err := os.ReadDir(parent)
	if err != nil {
		return
	}
	prefix := "." + base + ".partial-"
	host, _ := os.Hostname()
	for _, e := range entries {
		if !e.IsDir() || !strings.HasPrefix(e.Name(), prefix) {
			continue
		}
		p := filepath.Join(parent, e.Name())
		if partialIsStale(p, host) {
			os.RemoveAll(p)
		}
	}
}

func partialIsStale(p, host string) bool {
	fi, err := os.Stat(p)
	if err != nil {
		return false
	}
	age := time.Since(fi.ModTime())
	var pid int
	var h string
	n := 0
	if b, err := os.ReadFile(filepath.Join(p, ownerFile)); err == nil {
		n, _ = fmt.Sscanf(string(b), "%d %s", &pid, &h)
	}
	switch {
	case n == 0:
		// No owner file, or an empty one: the writer died right after creating the
		// directory, or between creating the owner file and writing it (open, then write:
		// TestKill9DuringRun's partial left beside the bundle under load was one of these,
		// kept for staleAfter as if its writer might still fill it in). The PID in the name
		// is taken for this host's: on a shared file system a writer on another host could
		// lose its directory in the microseconds before its owner file is written, and would
		// then fail with an error, never a bundle.
		if pid, ok := namePID(filepath.Base(p)); ok && !processAlive(pid) {
			return true
		}
		return age > staleAfter
	case n == 1 || h == host:
		return !processAlive(pid)
	default:
		return age > staleForeignAfter
	}
}

// namePID reads the writer's PID from a partial directory's name, .BASE.partial-PID-RANDOM.
func namePID(name string) (int, bool) {
	i := strings.LastIndex(name, ".partial-")
	if i < 0 {
		return 0, false
	}
	digits, _, ok := strings.Cut(name[i+len(".partial-"):], "-")
	if !ok {
		return 0, false
	}
	pid, err := strconv.Atoi(digits)
	return pid, err == nil && pid > 0
}

// Dir is the final path of the bundle.
func (w *Writer) Dir() string { return w.dir }

// Path returns where file name (slash-separated, relative, e.g. "dfc/window_001.nii.gz") lives
// inside the temporary directory, creating its parent directories, for writers that create
// files themselves. A name that is absolute or leaves the bundle poisons the Writer and yields "".
func (w *Writer) Path(name string) string {
	p, err := w.prepare(name)
	if err != nil {
		w.fail(err)
		return ""
	}
	return p
}

func (w *Writer) prepare(name string) (string, error) {
	if name == "" || !filepath.IsLocal(filepath.FromSlash(name)) || strings.HasPrefix(name, "/") {
		return "", fmt.Errorf("bundle %s: file name %q must be relative and stay inside the bundle", w.dir, name)
	}
	w.mu.Lock()
	done := w.done
	w.mu.Unlock()
	if done {
		return "", fmt.Errorf("bundle %s: write %s after Commit or Abort", w.dir, name)
	}
	p := filepath.Join(w.tmp, filepath.FromSlash(name))
	if err := diskfault.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		return "", fmt.Errorf("bundle %s: %w", w.dir, err)
	}
	return p, nil
}

// fail records the first failed write; it returns err for convenience.
func (w *Writer) fail(err error) error {
	w.mu.Lock()
	if w.err == nil {
		w.err = err
	}
	w.mu.Unlock()
	return err
}

// WriteFile creates file name in the bundle and lets fill write its content through a buffer.
// On error the file is removed and the Writer poisoned.
func (w *Writer) WriteFile(name string, fill func(io.Writer) error) error {
	p, err := w.prepare(name)
	if err != nil {
		return w.fail(err)
	}
	f, err := diskfault.OpenFile(p, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o644)
	if err != nil {
		return w.fail(fmt.Errorf("bundle %s: write %s: %w", w.dir, name, err))
	}
	bw := bufio.NewWriterSize(f, 1<<20)
	err = fill(bw)
	if err == nil {
		err = bw.Flush()
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		os.Remove(p)
		return w.fail(fmt.Errorf("bundle %s: write %s: %w", w.dir, name, err))
	}
	return nil
}

// WriteJSON writes v as indented JSON (struct fields in declaration order, map keys sorted,
// as encoding/json does). NaN and ±Inf are not JSON: they are written as null (MarshalFinite)
// rather than losing the file; a document that can hold them says why beside them (see
// MarshalFinite's paths).
func (w *Writer) WriteJSON(name string, v any) error {
	b, _, err := MarshalFinite(v)
	if err != nil {
		return w.fail(fmt.Errorf("bundle %s: write %s: %w", w.dir, name, err))
	}
	b = append(b, '\n')
	return w.WriteFile(name, func(out io.Writer) error {
		_, err := out.Write(b)
		return err
	})
}

// WriteTSV writes a tab-separated table with a header line. rows calls emit once per row;
// every row must have as many fields as the header, and no field may hold a tab or a newline.
func (w *Writer) WriteTSV(name string, header []string, rows func(emit func(fields ...string) error) error) error {
	return w.WriteFile(name, func(out io.Writer) error {
		bw, ok := out.(*bufio.Writer)
		if !ok {
			bw = bufio.NewWriter(out)
			defer bw.Flush()
		}
		line := func(fields []string) error {
			for i, f := range fields {
				if strings.ContainsAny(f, "\t\n\r") {
					return fmt.Errorf("field %q holds a tab or newline", f)
				}
				if i > 0 {
					bw.WriteByte('\t')
				}
				bw.WriteString(f)
			}
			return bw.WriteByte('\n')
		}
		if len(header) == 0 {
			return errors.New("table has no columns")
		}
		if err := line(header); err != nil {
			return err
		}
		row := 0
		return rows(func(fields ...string) error {
			row++
			if len(fields) != len(header) {
				return fmt.Errorf("row %d has %d fields, the header %d", row, len(fields), len(header))
			}
			return line(fields)
		})
	})
}

// FormatFloat32 is the shortest decimal that reads back as the same float32.
func FormatFloat32(v float32) string { return strconv.FormatFloat(float64(v), 'g', -1, 32) }

// FormatMM formats a world coordinate in mm to 1 µm, more than any scanner resolves.
func FormatMM(v float64) string {
	s := strconv.FormatFloat(v, 'f', 3, 64)
	if s == "-0.000" {
		return "0.000"
	}
	return s
}

// WriteNetwork writes network.npz (scipy CSR, see ReadNetwork) and, when the network has at most
// EdgeListMax edges, edges.tsv (i, j, weight; 0-based node numbers as in nodes.tsv, i < j).
// See CompressNetwork for the choice between stored and deflated members.
func (w *Writer) WriteNetwork(nw *network.Network) error {
	if nw == nil {
		return w.fail(fmt.Errorf("bundle %s: write network.npz: no network", w.dir))
	}
	if err := nw.Validate(); err != nil {
		return w.fail(fmt.Errorf("bundle %s: write network.npz: %w", w.dir, err))
	}
	stored := nw
	side := NetworkSidecar{Matrix: "upper", Shape: [2]int{nw.N, nw.N}, Edges: nw.Edges(), StoredEntries: nw.Edges(),
		Note: "strict upper triangle (i < j) of the symmetric network: the symmetric matrix is A + A.T"}
	if w.SymmetricNetwork {
		stored = symmetricCSR(nw)
		side.Matrix, side.StoredEntries = "symmetric", stored.Edges()
		side.Note = "the whole symmetric matrix: every edge is stored as (i, j) and (j, i); do not add A.T"
	}
	if err := w.WriteFile("network.npz", func(out io.Writer) error { return writeNPZ(out, stored, w.CompressNetwork) }); err != nil {
		return err
	}
	if err := w.WriteJSON(schema.NetworkSidecarFile, side); err != nil {
		return err
	}
	if nw.Edges() > EdgeListMax {
		return nil
	}
	return w.WriteTSV("edges.tsv", []string{"i", "j", "weight"}, func(emit func(...string) error) error {
		for i := 0; i < nw.N; i++ {
			cols, ws := nw.Row(i)
			si := strconv.Itoa(i)
			for p, j := range cols {
				if err := emit(si, strconv.FormatUint(uint64(j), 10), FormatFloat32(ws[p])); err != nil {
					return err
				}
			}
		}
		return nil
	})
}

// WriteNodes writes nodes.tsv: for images node, i, j, k (voxel indices) and x_mm, y_mm, z_mm
// (world coordinates through the scan's affine); for plain matrices node and label.
func (w *Writer) WriteNodes(s *scan.Scan) error {
	if s == nil {
		return w.fail(fmt.Errorf("bundle %s: write nodes.tsv: no scan", w.dir))
	}
	if s.IJK == nil {
		if s.Labels != nil && len(s.Labels) != s.N {
			return w.fail(fmt.Errorf("bundle %s: write nodes.tsv: %d labels for %d nodes", w.dir, len(s.Labels), s.N))
		}
		header := []string{"node"}
		if s.Labels != nil {
			header = append(header, "label")
		}
		return w.WriteTSV("nodes.tsv", header, func(emit func(...string) error) error {
			for v := 0; v < s.N; v++ {
				f := []string{strconv.Itoa(v)}
				if s.Labels != nil {
					f = append(f, s.Labels[v])
				}
				if err := emit(f...); err != nil {
					return err
				}
			}
			return nil
		})
	}
	if len(s.IJK) != s.N {
		return w.fail(fmt.Errorf("bundle %s: write nodes.tsv: %d voxel positions for %d nodes", w.dir, len(s.IJK), s.N))
	}
	return w.WriteTSV("nodes.tsv", []string{"node", "i", "j", "k", "x_mm", "y_mm", "z_mm"}, func(emit func(...string) error) error {
		for v := 0; v < s.N; v++ {
			p, x := s.IJK[v], s.World(v)
			if err := emit(strconv.Itoa(v),
				strconv.Itoa(int(p[0])), strconv.Itoa(int(p[1])), strconv.Itoa(int(p[2])),
				FormatMM(x[0]), FormatMM(x[1]), FormatMM(x[2])); err != nil {
				return err
			}
		}
		return nil
	})
}

// Commit makes the bundle durable (fsync of every file and directory) and renames it into
// place, replacing an earlier bundle when Create allowed it. It returns the final directory.
// After a failed write Commit removes the temporary directory and returns that failure.
func (w *Writer) Commit() (string, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.done {
		return "", fmt.Errorf("bundle %s: already committed or aborted", w.dir)
	}
	if w.err != nil {
		w.done = true
		os.RemoveAll(w.tmp)
		return "", fmt.Errorf("bundle %s not written: %w", w.dir, w.err)
	}
	fail := func(err error) (string, error) {
		w.done = true
		os.RemoveAll(w.tmp)
		return "", err
	}
	marker := "HubScope results bundle, format 1\n"
	if err := diskfault.WriteFile(filepath.Join(w.tmp, Marker), []byte(marker), 0o644); err != nil {
		return fail(fmt.Errorf("bundle %s: %w", w.dir, err))
	}
	if err := os.Remove(filepath.Join(w.tmp, ownerFile)); err != nil {
		return fail(fmt.Errorf("bundle %s: %w", w.dir, err))
	}
	if err := syncTree(w.tmp); err != nil {
		return fail(fmt.Errorf("bundle %s: flush to disk: %w", w.dir, err))
	}
	// The destination may have appeared since Create; check again right before the rename.
	if err := checkReplaceable(w.dir, w.overwrite); err != nil {
		return fail(err)
	}
	var old string
	if _, err := os.Lstat(w.dir); err == nil {
		// Move the earlier bundle aside first: rename cannot replace a non-empty directory.
		old = w.tmp + ".replaced"
		if err := diskfault.Rename(w.dir, old); err != nil {
			return fail(fmt.Errorf("bundle %s: move earlier bundle aside: %w", w.dir, err))
		}
	}
	if err := diskfault.Rename(w.tmp, w.dir); err != nil {
		if old != "" {
			os.Rename(old, w.dir)
		}
		return fail(fmt.Errorf("bundle %s: %w", w.dir, err))
	}
	w.done = true
	syncDir(filepath.Dir(w.dir))
	if old != "" {
		os.RemoveAll(old)
	}
	return w.dir, nil
}

// Abort removes the temporary directory; the bundle does not appear. It is safe to call after
// Commit (then it does nothing) and more than once, so callers may defer it.
func (w *Writer) Abort() {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.done {
		return
	}
	w.done = true
	os.RemoveAll(w.tmp)
}

// syncTree fsyncs every regular file and directory under root, so that the rename that
// publishes the bundle cannot reach the disk before its contents.
func syncTree(root string) error {
	return filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			return syncDir(p)
		}
		if !d.Type().IsRegular() {
			return nil
		}
		return diskfault.SyncPath(p)
	})
}

// syncDir fsyncs a directory's entries; Windows cannot open directories for that, and NTFS
// journals renames, so there it is skipped.
func syncDir(p string) error {
	if runtime.GOOS == "windows" {
		return nil
	}
	return diskfault.SyncPath(p)
}

// NetworkSidecar is network.json (schema.NetworkSidecar): which part of the symmetric matrix
// network.npz holds.
type NetworkSidecar = schema.NetworkSidecar

// symmetricCSR is the full symmetric matrix of a strict-upper-triangle network: row i holds
// its neighbours j < i (from the columns of earlier rows, in increasing i) then j > i, so
// every row stays sorted. It is not a network.Network in the strict sense (Validate refuses
// it); it only feeds writeNPZ.
func symmetricCSR(nw *network.Network) *network.Network {
	n, e := nw.N, nw.Edges()
	count := make([]uint64, n+1)
	for i := 0; i < n; i++ {
		cols, _ := nw.Row(i)
		count[i+1] += uint64(len(cols))
		for _, j := range cols {
			count[j+1]++
		}
	}
	out := &network.Network{N: n, Indptr: make([]uint64, n+1), Indices: make([]uint32, 2*e), Weights: make([]float32, 2*e)}
	for i := 0; i < n; i++ {
		out.Indptr[i+1] = out.Indptr[i] + count[i+1]
	}
	next := slices.Clone(out.Indptr[:n])
	for i := 0; i < n; i++ { // lower parts first: rows i visited in order keep columns sorted
		cols, ws := nw.Row(i)
		for p, j := range cols {
			out.Indices[next[j]], out.Weights[next[j]] = uint32(i), ws[p]
			next[j]++
		}
	}
	for i := 0; i < n; i++ {
		cols, ws := nw.Row(i)
		copy(out.Indices[next[i]:], cols)
		copy(out.Weights[next[i]:], ws)
	}
	return out
}
