package report

import (
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"reflect"
	"slices"
	"strings"

	"github.com/hubscope/hubscope/ipc/schema"
	"github.com/hubscope/hubscope/ipc/settings"
)

// Invocation is what a command line needs to repeat an analysis: the input files, the results
// folder and the settings. The files are as the analysis named them (paths on the machine that
// ran it).
type Invocation struct {
	Scan, Mask, Norm, Out string
	Settings              settings.Settings
}

// Command is the helper's command line that repeats the analysis: `hubscope-helper run` with
// the scan, the results folder and one flag for each setting that differs from the defaults
// (settings.Fields: the same table the helper's flags are made from, so every flag printed is
// one run accepts).
func (in Invocation) Command() string {
	args := []string{"hubscope-helper", "run", in.Scan, "--out", in.Out}
	if in.Mask != "" {
		args = append(args, "--mask", in.Mask)
	}
	if in.Norm != "" {
		args = append(args, "--norm", in.Norm)
	}
	var flags [][]string // one flag and its value (or a switch alone) each
	s, def := in.Settings, settings.Defaults()
	defs := map[string]any{}
	for _, f := range def.Fields() {
		defs[f.Key] = deref(f.Value)
	}
	for _, f := range s.Fields() {
		v := deref(f.Value)
		if f.Flag == "" || v == defs[f.Key] {
			continue
		}
		if b, ok := v.(bool); ok {
			if b {
				flags = append(flags, []string{"--" + f.Flag})
			} else {
				flags = append(flags, []string{"--" + f.Flag + "=false"})
			}
			continue
		}
		flags = append(flags, []string{"--" + f.Flag, fmt.Sprint(v)})
	}
	// A setting that differs from its default only because another one reset it (the density
	// of a run thresholded at r is 0) is left out when the command line without it gives the
	// same settings: the helper resolves them the same way.
	for i := 0; i < len(flags); i++ {
		without := slices.Concat(flags[:i:i], flags[i+1:])
		if same(without, s) {
			flags = without
			i--
		}
	}
	for _, f := range flags {
		args = append(args, f...)
	}
	for i, a := range args {
		args[i] = shellQuote(a)
	}
	return strings.Join(args, " ")
}

// same reports whether the helper's flags parse to the settings s.
func same(flags [][]string, s settings.Settings) bool {
	fs := flag.NewFlagSet("run", flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	got := settings.Defaults()
	got.AddFlags(fs)
	if fs.Parse(slices.Concat(flags...)) != nil || got.Resolve(got.Given(fs)) != nil {
		return false
	}
	return reflect.DeepEqual(got, s)
}

func deref(p any) any {
	switch p := p.(type) {
	case *string:
		return *p
	case *bool:
		return *p
	case *int:
		return *p
	case *uint64:
		return *p
	case *float64:
		return *p
	}
	panic(fmt.Sprintf("report: unsupported settings field type %T", p))
}

// shellQuote quotes a word for a POSIX shell when it holds anything beyond the characters
// that never need quoting.
func shellQuote(s string) string {
	if s != "" && strings.Trim(s, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_-+=/.,:@%") == "" {
		return s
	}
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}

// ErrNotARun is ParseInvocation's answer for a bundle that `run` did not write (a group
// network, say): its parameters name no scan, and there is no run command to print.
var ErrNotARun = errors.New("provenance.json: the parameters name no scan (not the bundle of a run)")

// ParseInvocation reads provenance.json's parameters (the run's options and settings, as the
// helper wrote them): the scan, mask, norm and results folder, and the settings keys.
func ParseInvocation(provenance []byte) (Invocation, error) {
	// schema.Provenance's Parameters is the writer's own options struct; read it as raw
	// values by key (Unmarshal fills the map the interface points to).
	params := map[string]json.RawMessage{}
	p := schema.Provenance{Parameters: &params}
	if err := json.Unmarshal(provenance, &p); err != nil {
		return Invocation{}, fmt.Errorf("provenance.json: %w", err)
	}
	var in Invocation
	str := func(key string, dst *string) error {
		if b, ok := params[key]; ok {
			if err := json.Unmarshal(b, dst); err != nil {
				return fmt.Errorf("provenance.json: parameters.%s: %w", key, err)
			}
		}
		return nil
	}
	for key, dst := range map[string]*string{"scan": &in.Scan, "mask": &in.Mask, "norm": &in.Norm, "out": &in.Out} {
		if err := str(key, dst); err != nil {
			return Invocation{}, err
		}
	}
	if in.Scan == "" {
		return Invocation{}, ErrNotARun
	}
	known := map[string]json.RawMessage{}
	def := settings.Defaults()
	for _, f := range def.Fields() {
		if b, ok := params[f.Key]; ok {
			known[f.Key] = b
		}
	}
	b, err := json.Marshal(known)
	if err != nil {
		return Invocation{}, err
	}
	if err := json.Unmarshal(b, &in.Settings); err != nil {
		return Invocation{}, fmt.Errorf("provenance.json: parameters: %w", err)
	}
	return in, nil
}
