package settings

import (
	"bytes"
	"encoding/json"
	"flag"
	"fmt"
)

// UnmarshalJSON decodes settings the way a client sends them: the keys left out take the
// defaults, the rest are resolved as Resolve says (a lone threshold names the mode), and an
// unknown key is refused.
func (s *Settings) UnmarshalJSON(b []byte) error {
	var keys map[string]json.RawMessage
	if err := json.Unmarshal(b, &keys); err != nil {
		return err
	}
	type plain Settings // without this method
	p := plain(Defaults())
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&p); err != nil {
		return fmt.Errorf("settings: %w", err)
	}
	*s = Settings(p)
	given := make(map[string]bool, len(keys))
	for k := range keys {
		given[k] = true
	}
	return s.Resolve(given)
}

// AddFlags defines the table's command-line flags on fs, each bound to its field of s, with
// s's values as the defaults the help text shows.
func (s *Settings) AddFlags(fs *flag.FlagSet) {
	for _, f := range s.Fields() {
		if f.Flag == "" {
			continue
		}
		switch p := f.Value.(type) {
		case *string:
			fs.StringVar(p, f.Flag, *p, f.Help)
		case *bool:
			fs.BoolVar(p, f.Flag, *p, f.Help)
		case *int:
			fs.IntVar(p, f.Flag, *p, f.Help)
		case *uint64:
			fs.Uint64Var(p, f.Flag, *p, f.Help)
		case *float64:
			fs.Float64Var(p, f.Flag, *p, f.Help)
		default:
			panic(fmt.Sprintf("settings: %s: unsupported field type %T", f.Key, f.Value))
		}
	}
}

// Given returns the JSON keys of the table's flags that were set on fs, for Resolve.
func (s *Settings) Given(fs *flag.FlagSet) map[string]bool {
	byFlag := map[string]string{}
	for _, f := range s.Fields() {
		if f.Flag != "" {
			byFlag[f.Flag] = f.Key
		}
	}
	given := map[string]bool{}
	fs.Visit(func(f *flag.Flag) {
		if key, ok := byFlag[f.Name]; ok {
			given[key] = true
		}
	})
	return given
}

// FlagArg is the argument name the help text shows for one of the table's flags ("" for a
// switch or a flag that is not the table's).
func FlagArg(flagName string) string {
	s := Defaults()
	for _, f := range s.Fields() {
		if f.Flag == flagName {
			return f.Arg
		}
	}
	return ""
}
