package report

import (
	"encoding/json"
	"os"
	"reflect"
	"strings"
	"testing"
)

// The helper's pipeline keeps an example metrics.json of a full analysis (and fails its own test
// when the keys change); every key the app reads must be in it, so a renamed or dropped key in
// the helper cannot silently blank the app's Network tab and report.
const pipelineExample = "../../helper/pipeline/testdata/metrics_example.json"

// readKeys lists the JSON key paths a Go type decodes ("a.b", "a[].b").
func readKeys(t reflect.Type, prefix string, out map[string]bool) {
	for t.Kind() == reflect.Pointer || t.Kind() == reflect.Slice {
		if t.Kind() == reflect.Slice {
			prefix += "[]"
		}
		t = t.Elem()
	}
	if t.Kind() != reflect.Struct {
		return
	}
	for i := range t.NumField() {
		f := t.Field(i)
		name, _, _ := strings.Cut(f.Tag.Get("json"), ",")
		if name == "" || name == "-" {
			continue
		}
		p := name
		if prefix != "" {
			p = prefix + "." + name
		}
		out[p] = true
		readKeys(f.Type, p, out)
	}
}

func writtenKeys(v any, prefix string, out map[string]bool) {
	switch x := v.(type) {
	case map[string]any:
		for k, e := range x {
			p := k
			if prefix != "" {
				p = prefix + "." + k
			}
			out[p] = true
			writtenKeys(e, p, out)
		}
	case []any:
		for _, e := range x {
			writtenKeys(e, prefix+"[]", out)
		}
	}
}

func TestMetricsMatchThePipelinesSchema(t *testing.T) {
	b, err := os.ReadFile(pipelineExample)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := ParseMetrics(b); err != nil {
		t.Fatalf("the pipeline's example metrics.json: %v", err)
	}
	var v any
	if err := json.Unmarshal(b, &v); err != nil {
		t.Fatal(err)
	}
	written := map[string]bool{}
	writtenKeys(v, "", written)
	read := map[string]bool{}
	readKeys(reflect.TypeOf(Metrics{}), "", read)
	// Keys a full density analysis on the CPU leaves out by design.
	absent := map[string]string{
		"network.correction": "significance thresholds only",
		"network.device":     "CUDA runs only",
	}
	for k := range read {
		if absent[k] != "" || strings.HasPrefix(k, "global_basic") { // basic metrics only
			continue
		}
		if !written[k] {
			t.Errorf("the app reads metrics.json key %q, which the pipeline no longer writes", k)
		}
	}
	if len(read) < 40 {
		t.Fatalf("only %d keys found in report.Metrics: the reflection walk is broken", len(read))
	}
}
