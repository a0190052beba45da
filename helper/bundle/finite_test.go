package bundle

import (
	"encoding/json"
	"math"
	"testing"
	"time"
)

type finiteInner struct {
	A float64  `json:"a"`
	B *float64 `json:"b"`
	C float32  `json:"c,omitempty"`
}

type finiteEmbedded struct {
	E int `json:"e"`
}

type finiteDoc struct {
	finiteEmbedded
	Name   string             `json:"name"`
	Skip   float64            `json:"-"`
	When   time.Time          `json:"when"`
	Inner  finiteInner        `json:"inner"`
	List   []finiteInner      `json:"list,omitempty"`
	Map    map[string]float64 `json:"map"`
	Raw    json.RawMessage    `json:"raw,omitempty"`
	Bytes  []byte             `json:"bytes"`
	Quoted int                `json:"quoted,string"`
	Any    any                `json:"any"`
	hidden int
	Plain  float64
}

// TestMarshalFiniteMatchesEncodingJSON: without non-finite numbers the bytes are encoding/json's;
// with them, each becomes null and is reported at its path.
func TestMarshalFiniteMatchesEncodingJSON(t *testing.T) {
	x := 0.25
	d := finiteDoc{finiteEmbedded{3}, "<a&b>", 1, time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC),
		finiteInner{1.5, &x, 0.1}, []finiteInner{{A: 2}, {A: 1e-7, C: 3}}, map[string]float64{"z": 1, "a": 2},
		json.RawMessage(`{"k": [1, 2]}`), []byte("hi"), 42, map[string]any{"n": 1.0}, 0, 1e300}
	want, err := json.MarshalIndent(d, "", "  ")
	if err != nil {
		t.Fatal(err)
	}
	got, nf, err := MarshalFinite(d)
	if err != nil || len(nf) != 0 {
		t.Fatal(err, nf)
	}
	if string(got) != string(want) {
		t.Fatalf("got\n%s\nwant\n%s", got, want)
	}
	inf := math.Inf(1)
	d.Inner.A, d.Inner.B, d.List[1].C, d.Map["z"] = math.NaN(), &inf, float32(math.Inf(-1)), math.Inf(1)
	got, nf, err = MarshalFinite(d)
	if err != nil {
		t.Fatal(err)
	}
	var paths []string
	for _, n := range nf {
		paths = append(paths, n.Path)
	}
	if want := []string{"inner.a", "inner.b", "list[1].c", "map.z"}; len(paths) != 4 || paths[0] != want[0] || paths[1] != want[1] || paths[2] != want[2] || paths[3] != want[3] {
		t.Fatalf("paths %v, want %v", paths, want)
	}
	var back map[string]any
	if err := json.Unmarshal(got, &back); err != nil {
		t.Fatalf("not JSON: %v\n%s", err, got)
	}
	if in := back["inner"].(map[string]any); in["a"] != nil || in["b"] != nil {
		t.Fatalf("inner %v: want nulls", in)
	}
}
