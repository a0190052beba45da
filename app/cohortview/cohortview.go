// Package cohortview shows a cohort's results folder, opened from the desktop app: the
// subjects × measures table that `hubscope-helper cohort` writes (measures.tsv: one row per
// run, the participants' columns, then every global measure), sortable by any column; and a
// two-group comparison by `hubscope-helper compare` (compare_global.tsv: Welch's t of each
// global measure with p, permutation p and the false discovery rate's q; compare_nodes.tsv:
// the nodes significant at the comparison's FDR, with their t). The folder is read as it is on
// disk: the tables are the helper's own, nothing is computed here.
package cohortview

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	"fyne.io/fyne/v2"
	"fyne.io/fyne/v2/container"
	"fyne.io/fyne/v2/widget"

	"github.com/hubscope/hubscope/app/sorttable"
)

// Files of a cohort's results (helper/cohort).
const (
	MeasuresFile      = "measures.tsv"
	CompareGlobalFile = "compare_global.tsv"
	CompareNodesFile  = "compare_nodes.tsv"
	// CompareDir is where compare writes by default, inside the cohort's folder.
	CompareDir = "compare"
)

// Table is one TSV file: its header and rows.
type Table struct {
	Path   string
	Header []string
	Rows   [][]string
}

// ReadTSV reads a tab-separated table with a header line; a row with another number of fields
// than the header is an error naming the file and line.
func ReadTSV(path string) (*Table, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	return ParseTSV(f, path)
}

// ParseTSV reads a tab-separated table with a header line from r (path names it in errors),
// as ReadTSV does.
func ParseTSV(r io.Reader, path string) (*Table, error) {
	t := &Table{Path: path}
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 1<<16), 16<<20)
	for line := 1; sc.Scan(); line++ {
		fields := strings.Split(strings.TrimRight(sc.Text(), "\r"), "\t")
		if line == 1 {
			t.Header = fields
			continue
		}
		if len(fields) == 1 && fields[0] == "" {
			continue
		}
		if len(fields) != len(t.Header) {
			return nil, fmt.Errorf("%s line %d: %d fields, the header has %d", path, line, len(fields), len(t.Header))
		}
		t.Rows = append(t.Rows, fields)
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	if t.Header == nil {
		return nil, fmt.Errorf("%s: empty (no header line)", path)
	}
	return t, nil
}

// Results are what a folder holds: the cohort's table, a comparison's, or both (a cohort
// folder with compare's default output inside).
type Results struct {
	Dir                     string
	Measures, Global, Nodes *Table
}

// Read looks in dir (and dir/compare) for a cohort's and a comparison's tables; a folder with
// neither is an error saying what it lacks.
func Read(dir string) (*Results, error) {
	return Load(dir, func(name string) (*Table, error) {
		for _, d := range []string{dir, filepath.Join(dir, CompareDir)} {
			t, err := ReadTSV(filepath.Join(d, name))
			if errors.Is(err, fs.ErrNotExist) {
				continue
			}
			return t, err
		}
		return nil, nil
	})
}

// Load is Read with the tables from read, which returns the named table (MeasuresFile,
// CompareGlobalFile, CompareNodesFile) of the folder or its compare/, or nil when neither has
// it: the browser app reads them from the helper (GET /v1/folders/table).
func Load(dir string, read func(name string) (*Table, error)) (*Results, error) {
	r := &Results{Dir: dir}
	var err error
	if r.Measures, err = read(MeasuresFile); err != nil {
		return nil, err
	}
	if r.Global, err = read(CompareGlobalFile); err != nil {
		return nil, err
	}
	if r.Nodes, err = read(CompareNodesFile); err != nil {
		return nil, err
	}
	if r.Measures == nil && r.Global == nil {
		return nil, fmt.Errorf("%s: no %s (hubscope-helper cohort) or %s (compare) in it or in %s/", dir, MeasuresFile, CompareGlobalFile, CompareDir)
	}
	return r, nil
}

// View is the cohort's tabs: Subjects (measures.tsv) and Comparison (the global tests and the
// significant nodes).
type View struct {
	Results *Results
	Tabs    *container.AppTabs
	// Measures, Global and Nodes are the tables shown (nil for a file the folder lacks).
	Measures, Global, Nodes *sorttable.Table
}

func table(t *Table) *sorttable.Table {
	widths := make([]float32, len(t.Header))
	for i, h := range t.Header {
		widths[i] = float32(max(70, min(200, 9*len(h)+24)))
	}
	st := sorttable.New(t.Header, widths)
	st.SetRows(t.Rows)
	return st
}

func title(text string) fyne.CanvasObject {
	l := widget.NewLabel(text)
	l.Wrapping = fyne.TextWrapWord
	return l
}

// NewView builds the tabs of r. Its widgets are for the UI goroutine.
func NewView(r *Results) *View {
	v := &View{Results: r, Tabs: container.NewAppTabs()}
	if m := r.Measures; m != nil {
		v.Measures = table(m)
		head := title(fmt.Sprintf("%d runs × %d columns from %s: the participants' columns, then each run's global measures. Tap a column's title to sort by it.", len(m.Rows), len(m.Header), m.Path))
		v.Tabs.Append(container.NewTabItem("Subjects", container.NewBorder(head, nil, nil, nil, v.Measures)))
	}
	if g := r.Global; g != nil {
		v.Global = table(g)
		var items []fyne.CanvasObject
		items = append(items, title(fmt.Sprintf("Two groups compared (%s): Welch's t of each global measure, p, permutation p and the false discovery rate's q.", g.Path)))
		box := container.NewBorder(container.NewVBox(items...), nil, nil, nil, v.Global)
		content := fyne.CanvasObject(box)
		if n := r.Nodes; n != nil {
			v.Nodes = table(n)
			v.Nodes.SortBy(col(n, "q_fdr"), false)
			nodes := container.NewBorder(title(fmt.Sprintf("%d nodes significant at the comparison's false discovery rate (%s): voxel i, j, k of the cohort's grid, t, p, q; the T-maps tab shows them over the brain with MNI positions and regions.", len(n.Rows), n.Path)), nil, nil, nil, v.Nodes)
			split := container.NewVSplit(box, nodes)
			split.Offset = 0.4
			content = split
		}
		v.Tabs.Append(container.NewTabItem("Comparison", content))
	}
	return v
}

func col(t *Table, name string) int {
	for i, h := range t.Header {
		if h == name {
			return i
		}
	}
	return 0
}
