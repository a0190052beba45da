package pipeline

import (
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"testing"
)

// metricsExample is a metrics.json of a full analysis with random networks. The pipeline writes
// and the app reads metrics.json through the same types (package schema); this file pins the
// keys, so that a renamed or dropped key is a deliberate change (docs/bundle.md, CHANGELOG.md).
const metricsExample = "testdata/metrics_example.json"

// jsonKeyPaths lists every key path of a decoded JSON value: objects as "a.b", array elements
// as "a[].b" (the union over elements).
func jsonKeyPaths(v any, prefix string, out map[string]bool) {
	switch x := v.(type) {
	case map[string]any:
		for k, e := range x {
			p := k
			if prefix != "" {
				p = prefix + "." + k
			}
			out[p] = true
			jsonKeyPaths(e, p, out)
		}
	case []any:
		for _, e := range x {
			jsonKeyPaths(e, prefix+"[]", out)
		}
	}
}

func sortedKeys(m map[string]bool) []string {
	s := make([]string, 0, len(m))
	for k := range m {
		s = append(s, k)
	}
	sort.Strings(s)
	return s
}

// checkMetricsSchema compares the key paths of a fresh metrics.json with the committed example
// (HUBSCOPE_UPDATE_GOLDEN=1 rewrites the example from this run).
func checkMetricsSchema(t *testing.T, bundleDir string) {
	t.Helper()
	fresh, err := os.ReadFile(filepath.Join(bundleDir, "metrics.json"))
	if err != nil {
		t.Fatal(err)
	}
	if os.Getenv("HUBSCOPE_UPDATE_GOLDEN") != "" {
		if err := os.WriteFile(metricsExample, fresh, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	keys := func(b []byte) []string {
		var v any
		if err := json.Unmarshal(b, &v); err != nil {
			t.Fatal(err)
		}
		m := map[string]bool{}
		jsonKeyPaths(v, "", m)
		return sortedKeys(m)
	}
	want, err := os.ReadFile(metricsExample)
	if err != nil {
		t.Fatalf("%v (run with HUBSCOPE_UPDATE_GOLDEN=1 to create it)", err)
	}
	got, exp := keys(fresh), keys(want)
	if !slices.Equal(got, exp) {
		var added, gone []string
		for _, k := range got {
			if !slices.Contains(exp, k) {
				added = append(added, k)
			}
		}
		for _, k := range exp {
			if !slices.Contains(got, k) {
				gone = append(gone, k)
			}
		}
		t.Errorf("metrics.json's keys changed (new %v, gone %v): update %s with HUBSCOPE_UPDATE_GOLDEN=1 and check app/report's Metrics", added, gone, metricsExample)
	}
}
