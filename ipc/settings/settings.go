// Package settings is the one description of an analysis's choices. The command line, the
// IPC protocol (the desktop and browser apps), the helper daemon and the batch pipeline all
// use the Settings type below: its field table gives each setting's JSON key (wire,
// provenance.json, error messages), its command-line flag and its help text, so a setting is
// declared once. The package imports only the standard library, so the WebAssembly app can
// use it too.
//
// Settings are grouped (Network, Graph, Compute, Dynamic, …); each group is a struct embedded
// in Settings with a fields method (its table rows), a defaults method and a validate method,
// and is listed once in Settings.groups. See CONTRIBUTING.md, "Adding a setting".
package settings

import (
	"fmt"
	"math"
	"slices"
	"strings"
)

// Settings are the choices of one analysis. Start from Defaults; a decoded JSON object takes
// the defaults for the keys it leaves out (see UnmarshalJSON).
type Settings struct {
	Input
	Network
	Regions
	ThresholdSweep
	Graph
	Compute
	Dynamic
	Motion
	Cleaning
	Output
}

// group is one block of settings: its table rows, its defaults and its checks.
type group interface {
	fields() []Field
	defaults()
	// validate reports the group's first problem; s is the whole Settings, for checks that
	// span groups.
	validate(s *Settings) error
}

// groups lists the groups in the order of the table, of the help text and of validation.
// A new group is added here and embedded in Settings.
func (s *Settings) groups() []group {
	return []group{&s.Input, &s.Network, &s.Regions, &s.ThresholdSweep, &s.Graph, &s.Compute, &s.Dynamic, &s.Motion, &s.Cleaning, &s.Output}
}

// Field is one row of the settings table.
type Field struct {
	Key  string // JSON key on the wire and in provenance.json
	Flag string // command-line flag, without dashes ("" = not on the command line)
	Arg  string // the flag's argument in the help text ("" for a switch)
	Help string // one line for the help text
	// Value points into the Settings the table was taken from: *string, *bool, *int,
	// *uint64 or *float64.
	Value any
}

// Defaults are what a clinician gets without choosing: Pearson, exact density 1 %, full
// metrics against 15 random networks, CUDA when a GPU works.
func Defaults() Settings {
	var s Settings
	for _, g := range s.groups() {
		g.defaults()
	}
	return s
}

// Fields is the settings table, each row pointing into s.
func (s *Settings) Fields() []Field {
	var out []Field
	for _, g := range s.groups() {
		out = append(out, g.fields()...)
	}
	return out
}

// Field returns the table row with the given JSON key.
func (s *Settings) Field(key string) (Field, bool) {
	for _, f := range s.Fields() {
		if f.Key == key {
			return f, true
		}
	}
	return Field{}, false
}

// Validate reports the first problem with the settings as a *SettingError.
func (s *Settings) Validate() error {
	for _, g := range s.groups() {
		if err := g.validate(s); err != nil {
			return err
		}
	}
	return nil
}

// SettingError is a setting with a problem: its JSON key, its command-line flag ("" when it
// has none) and the problem in words. Find it with errors.As.
type SettingError struct {
	Key     string
	Flag    string
	Problem string
}

// Error names the setting by its key and, when it has one, its flag: "density (--density): …".
func (e *SettingError) Error() string {
	if e.Flag != "" {
		return e.Key + " (--" + e.Flag + "): " + e.Problem
	}
	return e.Key + ": " + e.Problem
}

// Errorf returns a *SettingError for the setting with the given key (its flag from the
// table), for checks made outside this package (a sweep's syntax, by package sweep).
func (s *Settings) Errorf(key, format string, args ...any) error {
	f, _ := s.Field(key)
	return &SettingError{Key: key, Flag: f.Flag, Problem: fmt.Sprintf(format, args...)}
}

// Resolve completes settings of which only the keys in given were chosen (JSON keys; the rest
// hold defaults), as the command line and a JSON request leave them: the threshold mode is the
// one threshold given when the mode itself is not, a threshold or correction the mode does not
// use is refused when given and cleared when not, the measure is lower-cased and a window
// without a step steps by 1 volume. Resolving resolved settings changes nothing.
func (s *Settings) Resolve(given map[string]bool) error {
	s.Measure = strings.ToLower(s.Measure)
	if err := s.Network.resolve(s, given); err != nil {
		return err
	}
	if given[KeySweep] {
		for key := range thresholdKeys {
			if given[key] {
				return s.Errorf(KeySweep, "replaces the threshold: give the sweep or %s, not both", key)
			}
		}
		// The defaults' threshold goes: the sweep sets it. Resolved settings (a job's, as the
		// helper echoes them to clients) then decode again instead of giving both.
		s.Density, s.R = 0, 0
	}
	if s.DFCWindow > 0 && s.DFCStep == 0 && !given[KeyDFCStep] {
		s.DFCStep = 1
	}
	return nil
}

// oneOf checks a named choice.
// A rule is one numeric setting's range: ok says whether v is in range (NaN and ±Inf never
// are); problem is the error's text, with v formatted in (%g).
type rule struct {
	key     string
	v       float64
	ok      bool
	problem string
}

// inRange returns the first broken rule as a *SettingError naming its setting.
func (s *Settings) inRange(rules ...rule) error {
	for _, r := range rules {
		if !r.ok || math.IsNaN(r.v) || math.IsInf(r.v, 0) {
			return s.Errorf(r.key, r.problem, r.v)
		}
	}
	return nil
}

func (s *Settings) oneOf(key, what, v string, choices []string) error {
	if slices.Contains(choices, v) {
		return nil
	}
	return s.Errorf(key, "unknown %s %q (want %s)", what, v, orList(choices))
}

// orList writes choices as "a, b or c".
func orList(choices []string) string {
	if len(choices) == 1 {
		return choices[0]
	}
	return strings.Join(choices[:len(choices)-1], ", ") + " or " + choices[len(choices)-1]
}
