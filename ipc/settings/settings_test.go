package settings

import (
	"encoding/json"
	"errors"
	"flag"
	"io"
	"math"
	"reflect"
	"slices"
	"strings"
	"testing"
)

func TestDefaultsAreValid(t *testing.T) {
	s := Defaults()
	if err := s.Validate(); err != nil {
		t.Fatal(err)
	}
	if s.Measure != Pearson || s.Mode != ModeDensity || s.Density != 0.01 || s.Metrics != MetricsFull || s.Random != 15 || s.HubSD != 1 || s.SwapsPerEdge != 5 || s.Seed != 1 || s.Backend != BackendAuto {
		t.Fatalf("defaults %+v", s)
	}
	r := s
	if err := r.Resolve(nil); err != nil || r != s {
		t.Fatalf("resolving the defaults changed them: %+v, %v", r, err)
	}
}

// TestTableCoversEveryField checks the table against the struct: every JSON field has exactly
// one row whose Value points at it, keys and flags are unique, and flags are lower-case words.
func TestTableCoversEveryField(t *testing.T) {
	s := Defaults()
	rows := map[string]Field{}
	flags := map[string]bool{}
	for _, f := range s.Fields() {
		if _, dup := rows[f.Key]; dup {
			t.Errorf("key %s twice in the table", f.Key)
		}
		rows[f.Key] = f
		if f.Flag != "" {
			if flags[f.Flag] {
				t.Errorf("flag --%s twice", f.Flag)
			}
			flags[f.Flag] = true
			if strings.Trim(f.Flag, "abcdefghijklmnopqrstuvwxyz-") != "" || strings.HasPrefix(f.Flag, "-") {
				t.Errorf("flag %q: want lower-case words joined by -", f.Flag)
			}
			_, isBool := f.Value.(*bool)
			if isBool != (f.Arg == "") || strings.ToUpper(f.Arg) != f.Arg {
				t.Errorf("flag --%s: argument name %q (switches take none, others an upper-case name)", f.Flag, f.Arg)
			}
		}
		if f.Help == "" {
			t.Errorf("key %s has no help", f.Key)
		}
	}
	var walk func(v reflect.Value)
	seen := 0
	walk = func(v reflect.Value) {
		for i := 0; i < v.NumField(); i++ {
			sf, fv := v.Type().Field(i), v.Field(i)
			if sf.Anonymous {
				walk(fv)
				continue
			}
			key, _, _ := strings.Cut(sf.Tag.Get("json"), ",")
			f, ok := rows[key]
			if !ok {
				t.Errorf("field %s (json %q) has no row in the table", sf.Name, key)
				continue
			}
			if reflect.ValueOf(f.Value).Pointer() != fv.Addr().Pointer() {
				t.Errorf("row %s does not point at field %s", key, sf.Name)
			}
			seen++
		}
	}
	walk(reflect.ValueOf(&s).Elem())
	if seen != len(rows) {
		t.Errorf("%d rows for %d fields", len(rows), seen)
	}
}

func TestValidateNamesTheSetting(t *testing.T) {
	for _, c := range []struct {
		change   func(*Settings)
		key, flg string
	}{
		{func(s *Settings) { s.Measure = "cosine" }, "measure", "measure"},
		{func(s *Settings) { s.Density = 2 }, "density", "density"},
		{func(s *Settings) { s.Density = 0 }, "density", "density"},
		{func(s *Settings) { s.Mode, s.R = ModeR, 1 }, "r", "r"},
		{func(s *Settings) { s.Mode, s.Alpha = ModeAlpha, 0 }, "alpha", "alpha"},
		{func(s *Settings) { s.Mode, s.Alpha, s.Correction = ModeAlpha, 0.05, "holm" }, "correction", "correction"},
		{func(s *Settings) { s.Correction = FDR }, "correction", "correction"},
		{func(s *Settings) { s.Mode, s.K = ModeKNN, 0 }, "knn", "knn"},
		{func(s *Settings) { s.Mode = "top" }, "threshold_mode", ""},
		{func(s *Settings) { s.Metrics = "most" }, "metrics", "metrics"},
		{func(s *Settings) { s.Random = -1 }, "random", "random"},
		{func(s *Settings) { s.HubSD = -1 }, "hub_sd", "hub-sd"},
		{func(s *Settings) { s.SwapsPerEdge = 0 }, "swaps_per_edge", "swaps-per-edge"},
		{func(s *Settings) { s.SwapsPerEdge = math.Inf(1) }, "swaps_per_edge", "swaps-per-edge"},
		{func(s *Settings) { s.Backend = "tpu" }, "backend", "backend"},
		{func(s *Settings) { s.DFCWindow = 2 }, "dfc_window", "window"},
		{func(s *Settings) { s.DFCStep = 1 }, "dfc_step", "step"},
		{func(s *Settings) { s.DFCNetworks = true }, "dfc_networks", "dfc-networks"},
		{func(s *Settings) { s.DFCWindow, s.DFCStep = 30, 0 }, "dfc_step", "step"},
		{func(s *Settings) { s.DFCWindow, s.DFCStep, s.DFCRank = 30, 1, 31 }, "dfc_rank", "dfc-rank"},
		{func(s *Settings) { s.Measure, s.DFCWindow, s.DFCStep, s.DFCRank = Kendall, 30, 1, 2 }, "dfc_rank", "dfc-rank"},
	} {
		s := Defaults()
		c.change(&s)
		err := s.Validate()
		var se *SettingError
		if !errors.As(err, &se) || se.Key != c.key || se.Flag != c.flg || se.Problem == "" {
			t.Errorf("%s: got %#v", c.key, err)
		}
	}
}

func TestUnmarshalTakesDefaultsAndResolves(t *testing.T) {
	for _, c := range []struct {
		js   string
		want func(*Settings)
		bad  string // key of the SettingError, or "json" for a decoding error
	}{
		{js: `{}`, want: func(*Settings) {}},
		{js: `null`, want: func(*Settings) {}},
		{js: `{"r": 0.4}`, want: func(s *Settings) { s.Mode, s.Density, s.R = ModeR, 0, 0.4 }},
		{js: `{"alpha": 0.05}`, want: func(s *Settings) { s.Mode, s.Density, s.Alpha, s.Correction = ModeAlpha, 0, 0.05, Bonferroni }},
		{js: `{"threshold_mode": "knn", "knn": 5, "measure": "Spearman"}`, want: func(s *Settings) { s.Mode, s.Density, s.K, s.Measure = ModeKNN, 0, 5, Spearman }},
		{js: `{"random": 0, "metrics": "basic"}`, want: func(s *Settings) { s.Random, s.Metrics = 0, MetricsBasic }},
		{js: `{"dfc_window": 30}`, want: func(s *Settings) { s.DFCWindow, s.DFCStep = 30, 1 }},
		{js: `{"density": 0.1, "r": 0.5}`, bad: "threshold_mode"},
		{js: `{"threshold_mode": "density", "r": 0.5}`, bad: "r"},
		{js: `{"correction": "fdr"}`, bad: "correction"},
		{js: `{"shell": "rm"}`, bad: "json"},
		{js: `{"density": "lots"}`, bad: "json"},
	} {
		var got Settings
		err := json.Unmarshal([]byte(c.js), &got)
		var se *SettingError
		switch {
		case c.bad == "json":
			if err == nil || errors.As(err, &se) {
				t.Errorf("%s: %v, want a decoding error", c.js, err)
			}
		case c.bad != "":
			if !errors.As(err, &se) || se.Key != c.bad {
				t.Errorf("%s: %v, want a problem with %s", c.js, err, c.bad)
			}
		default:
			want := Defaults()
			c.want(&want)
			if err != nil || got != want {
				t.Errorf("%s: %+v, %v\nwant %+v", c.js, got, err, want)
			}
			// What is sent comes back the same.
			b, _ := json.Marshal(got)
			var again Settings
			if err := json.Unmarshal(b, &again); err != nil || again != got {
				t.Errorf("%s: round trip %s gives %+v, %v", c.js, b, again, err)
			}
		}
	}
}

func TestFlags(t *testing.T) {
	for _, c := range []struct {
		args []string
		want func(*Settings)
		bad  string
	}{
		{args: nil, want: func(*Settings) {}},
		{args: []string{"--r", "0.3", "--abs"}, want: func(s *Settings) { s.Mode, s.Density, s.R, s.Abs = ModeR, 0, 0.3, true }},
		{args: []string{"--alpha", "0.01", "--correction", "fdr"}, want: func(s *Settings) { s.Mode, s.Density, s.Alpha, s.Correction = ModeAlpha, 0, 0.01, FDR }},
		{args: []string{"--density", "0.05", "--window", "40", "--hub-sd", "2"}, want: func(s *Settings) { s.Density, s.DFCWindow, s.DFCStep, s.HubSD = 0.05, 40, 1, 2 }},
		{args: []string{"--swaps-per-edge", "10"}, want: func(s *Settings) { s.SwapsPerEdge = 10 }},
		{args: []string{"--density", "0.05", "--knn", "3"}, bad: "threshold_mode"},
		{args: []string{"--correction", "fdr"}, bad: "correction"},
	} {
		s := Defaults()
		fs := flag.NewFlagSet("t", flag.ContinueOnError)
		fs.SetOutput(io.Discard)
		s.AddFlags(fs)
		if err := fs.Parse(c.args); err != nil {
			t.Fatal(err)
		}
		err := s.Resolve(s.Given(fs))
		var se *SettingError
		if c.bad != "" {
			if !errors.As(err, &se) || se.Key != c.bad {
				t.Errorf("%v: %v, want a problem with %s", c.args, err, c.bad)
			}
			continue
		}
		want := Defaults()
		c.want(&want)
		if err != nil || s != want {
			t.Errorf("%v: %+v, %v\nwant %+v", c.args, s, err, want)
		}
	}
	if FlagArg("density") != "FRACTION" || FlagArg("abs") != "" || FlagArg("no-such-flag") != "" {
		t.Error("FlagArg")
	}
}

func TestCleaning(t *testing.T) {
	s := Defaults()
	if s.Denoise != DenoiseAuto {
		t.Errorf("default cleaning %q, want auto", s.Denoise)
	}
	var got Settings
	if err := json.Unmarshal([]byte(`{"denoise":"scrubbing","band":"0.01,0.1","fd_mm":0.3,"confound_columns":"a, b"}`), &got); err != nil {
		t.Fatal(err)
	}
	if b, err := got.BandEdges(); err != nil || b != [2]float64{0.01, 0.1} || got.FD != 0.3 || !slices.Equal(got.Columns(), []string{"a", "b"}) || got.Validate() != nil {
		t.Errorf("decoded %+v: band %v %v, columns %q, validate %v", got.Cleaning, b, err, got.Columns(), got.Validate())
	}
	for _, c := range []struct {
		mutate func(*Settings)
		want   string
	}{
		{func(s *Settings) { s.Denoise = "aggressive" }, `denoise (--denoise): unknown cleaning strategy "aggressive"`},
		{func(s *Settings) { s.Band = "0.08,0.01" }, `band (--band): "0.08,0.01": want 0 ≤ LOW < HIGH`},
		{func(s *Settings) { s.Band = "0.01" }, `band (--band): "0.01": want LOW,HIGH`},
		{func(s *Settings) { s.FD = -1 }, "fd_mm (--fd): -1: want a finite value ≥ 0"},
		{func(s *Settings) { s.ConfoundColumns = "a,,b" }, "confound_columns (--confound-columns)"},
	} {
		s := Defaults()
		c.mutate(&s)
		var se *SettingError
		if err := s.Validate(); !errors.As(err, &se) || !strings.Contains(err.Error(), c.want) {
			t.Errorf("Validate = %v, want a SettingError with %q", err, c.want)
		}
	}
}

func TestDFCMaxCensored(t *testing.T) {
	s := Defaults()
	if s.DFCMaxCensored != 0.2 || s.Validate() != nil {
		t.Fatalf("default %g: %v", s.DFCMaxCensored, s.Validate())
	}
	for _, v := range []float64{-0.1, 1, 1.5} {
		s.DFCMaxCensored = v
		if err := s.Validate(); err == nil || !strings.Contains(err.Error(), "dfc_max_censored (--dfc-max-censored)") {
			t.Errorf("%g: %v", v, err)
		}
	}
}
