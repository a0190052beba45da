package npy

import (
	"bytes"
	"encoding/hex"
	"encoding/json"
	"strings"
	"testing"

	"github.com/hubscope/hubscope/helper/internal/pyref"
)

// TestNpyHeaderMatchesNumpy compares our .npy headers byte for byte with numpy's own
// write_array_header_1_0.
func TestNpyHeaderMatchesNumpy(t *testing.T) {
	pyref.Require(t, "numpy")
	cases := []struct {
		descr string
		shape []int64
	}{
		{"|S3", nil}, {"<i8", []int64{2}}, {"<i4", []int64{0}}, {"<i4", []int64{1}},
		{"<f4", []int64{123456789}}, {"<i8", []int64{99999999999}}, {"<f4", []int64{3, 4}},
		{"<i4", []int64{1234}}, {"<u4", []int64{12345678901234567}},
	}
	var specs []string
	for _, c := range cases {
		b, _ := json.Marshal(map[string]any{"descr": c.descr, "shape": c.shape})
		specs = append(specs, string(b))
	}
	out := pyref.Run(t, `
import io, json, sys
import numpy as np
for spec in sys.argv[1:]:
    s = json.loads(spec)
    f = io.BytesIO()
    np.lib.format.write_array_header_1_0(f, {'descr': s['descr'], 'fortran_order': False, 'shape': tuple(s['shape'] or ())})
    print(f.getvalue().hex())
`, specs...)
	lines := strings.Fields(string(out))
	if len(lines) != len(cases) {
		t.Fatalf("python printed %d headers for %d cases", len(lines), len(cases))
	}
	for i, c := range cases {
		got := hex.EncodeToString(EncodeHeader(c.descr, c.shape))
		if got != lines[i] {
			t.Errorf("header %s %v:\n got %q\nwant %q", c.descr, c.shape, mustUnhex(got), mustUnhex(lines[i]))
		}
		h, err := ReadHeader(bytes.NewReader(EncodeHeader(c.descr, c.shape)))
		n := h.Len
		if err != nil || h.Descr != c.descr || len(h.Shape) != len(c.shape) || int(n)%Align != 0 {
			t.Errorf("reading back %s %v: %+v, %d bytes, %v", c.descr, c.shape, h, n, err)
		}
	}
}

func mustUnhex(s string) string { b, _ := hex.DecodeString(s); return string(b) }
