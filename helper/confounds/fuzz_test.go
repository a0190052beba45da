package confounds

import (
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// FuzzRead reads arbitrary bytes as an fMRIPrep confounds table with an arbitrary JSON
// sidecar beside it: no panic; an error names the table or the sidecar; a table has a column
// per header name, every column as long as the others, and only numbers or NaN (n/a) in it.
func FuzzRead(f *testing.F) {
	f.Add([]byte("trans_x\ttrans_y\tframewise_displacement\n0.1\t0\tn/a\n0.2\t-0.1\t0.3\n"), []byte(`{"a_comp_cor_00": {"Method": "aCompCor", "Mask": "CSF", "Retained": true}}`))
	f.Add([]byte("global_signal\n1\n2\n3\n"), []byte(`{`))
	f.Add([]byte("a\tb\n1\t2\t3\n"), []byte(nil))
	f.Add([]byte("1\t2\n"), []byte(`[]`))
	dir := f.TempDir()
	f.Fuzz(func(t *testing.T, table, sidecar []byte) {
		path := filepath.Join(dir, "sub-01_task-rest_desc-confounds_timeseries.tsv")
		js := strings.TrimSuffix(path, ".tsv") + ".json"
		if err := os.WriteFile(path, table, 0o600); err != nil {
			t.Fatal(err)
		}
		os.Remove(js)
		if sidecar != nil {
			if err := os.WriteFile(js, sidecar, 0o600); err != nil {
				t.Fatal(err)
			}
		}
		tab, err := Read(path)
		if err != nil {
			if !strings.Contains(err.Error(), "sub-01_task-rest_desc-confounds_timeseries.") {
				t.Fatalf("error names neither file: %v", err)
			}
			return
		}
		if len(tab.Cols) != len(tab.Names) || tab.Rows() < 1 {
			t.Fatalf("%d columns for %d names, %d rows", len(tab.Cols), len(tab.Names), tab.Rows())
		}
		for i, c := range tab.Cols {
			if len(c) != tab.Rows() {
				t.Fatalf("column %q has %d rows, the table %d", tab.Names[i], len(c), tab.Rows())
			}
			for _, v := range c {
				if math.IsInf(v, 0) && !strings.Contains(strings.ToLower(string(table)), "inf") {
					t.Fatalf("column %q holds %g from no 'inf' in the file", tab.Names[i], v)
				}
			}
			if got := tab.Col(tab.Names[i]); len(got) != len(c) {
				t.Fatalf("Col(%q) is not column %d", tab.Names[i], i)
			}
		}
	})
}
