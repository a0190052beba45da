package atlas

import (
	"bytes"
	"strings"
	"testing"
)

// FuzzReadNames feeds atlas label tables (--atlas-names: "index name" lines, or a TSV with an
// index, name header) to the reader: it never panics, and every name it accepts is a
// non-empty label without surrounding spaces.
func FuzzReadNames(f *testing.F) {
	for _, s := range []string{
		"1 Precentral_L\n2 Precentral_R\n",
		"index\tname\n1\tleft hippocampus\n2\tright hippocampus\n",
		"# comment\n\n3 x\n",
		"1\n",
		"x y\n",
		"-1 negative\n99999999999999999999 big\n",
		"1\t\n2\t \t\n",
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		a := &Atlas{Names: map[int]string{}}
		if err := a.readNames(bytes.NewReader(b), "names.txt"); err != nil {
			if !strings.Contains(err.Error(), "names.txt") {
				t.Fatalf("error does not name the file: %v", err)
			}
			return
		}
		for id, name := range a.Names {
			if name == "" || strings.TrimSpace(name) != name {
				t.Fatalf("label %d named %q", id, name)
			}
		}
	})
}
