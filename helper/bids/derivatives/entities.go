package derivatives

import (
	"fmt"
	"path/filepath"
	"strings"
)

// EntityOrder is the order BIDS gives the entities of a functional file name (BIDS
// specification 1.8, Appendix "Entity table", the func datatype's column, then the derivative
// entities space, res, den, desc). A name lists the entities it has in this order.
var EntityOrder = []string{"sub", "ses", "task", "acq", "ce", "rec", "dir", "run", "echo", "part", "space", "res", "den", "desc"}

// Entity is one key-label pair of a BIDS file name.
type Entity struct{ Key, Label string }

// SourceEntities reads the entities of a BIDS-named input image (e.g. fMRIPrep's
// sub-01_task-rest_space-MNI152NLin2009cAsym_desc-preproc_bold.nii.gz), in name order, for
// naming what is derived from it: desc is dropped (the derivative gets its own), every other
// entity kept. The name must have a sub-<label>, only known entities, valid labels and a
// .nii or .nii.gz extension; the error names the file and the problem.
func SourceEntities(path string) ([]Entity, error) {
	base := filepath.Base(path)
	stem, ok := strings.CutSuffix(base, ".nii.gz")
	if !ok {
		if stem, ok = strings.CutSuffix(base, ".nii"); !ok {
			return nil, fmt.Errorf("%s: not a .nii or .nii.gz file, so it has no BIDS name to derive from", path)
		}
	}
	parts := strings.Split(stem, "_")
	if len(parts) < 2 {
		return nil, fmt.Errorf("%s: not a BIDS name (sub-<label>[_key-<label>…]_<suffix>.nii[.gz])", path)
	}
	var ents []Entity
	for _, kv := range parts[:len(parts)-1] {
		k, v, ok := strings.Cut(kv, "-")
		if !ok {
			return nil, fmt.Errorf("%s: %q is not a BIDS key-label entity", path, kv)
		}
		if !known(k) {
			return nil, fmt.Errorf("%s: unknown BIDS entity %q (known: %s)", path, k, strings.Join(EntityOrder, ", "))
		}
		if err := ValidLabel(k, v); err != nil {
			return nil, fmt.Errorf("%s: %w", path, err)
		}
		if k != "desc" {
			ents = append(ents, Entity{k, v})
		}
	}
	if len(ents) == 0 || ents[0].Key != "sub" {
		return nil, fmt.Errorf("%s: a BIDS name starts with sub-<label>", path)
	}
	if err := checkOrder(ents); err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return ents, nil
}

func known(k string) bool {
	for _, e := range EntityOrder {
		if e == k {
			return true
		}
	}
	return false
}

func rank(k string) int {
	for i, e := range EntityOrder {
		if e == k {
			return i
		}
	}
	return -1
}

func checkOrder(ents []Entity) error {
	for i := 1; i < len(ents); i++ {
		if rank(ents[i].Key) <= rank(ents[i-1].Key) {
			return fmt.Errorf("entity %s-%s after %s-%s: BIDS orders them %s", ents[i].Key, ents[i].Label, ents[i-1].Key, ents[i-1].Label, strings.Join(EntityOrder, ", "))
		}
	}
	return nil
}

// EntityName is a derivative file name: the entities, then desc-<desc> (when desc is not
// empty), then _<suffix><ext> (ext with its dot). Labels and the suffix must be alphanumeric.
func EntityName(ents []Entity, desc, suffix, ext string) (string, error) {
	if desc != "" {
		ents = append(ents[:len(ents):len(ents)], Entity{"desc", desc})
	}
	var b strings.Builder
	for _, e := range ents {
		if err := ValidLabel(e.Key, e.Label); err != nil {
			return "", err
		}
		b.WriteString(e.Key + "-" + e.Label + "_")
	}
	if err := ValidLabel("suffix", suffix); err != nil {
		return "", err
	}
	if err := checkOrder(ents); err != nil {
		return "", err
	}
	return b.String() + suffix + ext, nil
}

// EntityDir is the folder of a run's files in a dataset: sub-<label>[/ses-<label>]/func.
func EntityDir(ents []Entity) string {
	dir := ""
	for _, e := range ents {
		switch e.Key {
		case "sub":
			dir = "sub-" + e.Label
		case "ses":
			dir = filepath.Join(dir, "ses-"+e.Label)
		}
	}
	return filepath.Join(dir, "func")
}

// CheckName checks a derivative file name against the BIDS entity rules: key-label pairs of
// known entities in EntityOrder, each once, starting with sub; alphanumeric labels; an
// alphanumeric suffix; an extension of lower-case letters and dots.
func CheckName(name string) error {
	dot := strings.IndexByte(name, '.')
	if dot <= 0 {
		return fmt.Errorf("%s: no extension", name)
	}
	stem, ext := name[:dot], name[dot:]
	for _, r := range ext {
		if !(r >= 'a' && r <= 'z' || r >= '0' && r <= '9' || r == '.') {
			return fmt.Errorf("%s: extension %q is not lower-case letters and dots", name, ext)
		}
	}
	parts := strings.Split(stem, "_")
	if len(parts) < 2 {
		return fmt.Errorf("%s: want sub-<label>[_key-<label>…]_<suffix>", name)
	}
	if err := ValidLabel("suffix", parts[len(parts)-1]); err != nil {
		return fmt.Errorf("%s: %w", name, err)
	}
	var ents []Entity
	for _, kv := range parts[:len(parts)-1] {
		k, v, ok := strings.Cut(kv, "-")
		if !ok || !known(k) {
			return fmt.Errorf("%s: %q is not a known BIDS entity", name, kv)
		}
		if err := ValidLabel(k, v); err != nil {
			return fmt.Errorf("%s: %w", name, err)
		}
		ents = append(ents, Entity{k, v})
	}
	if ents[0].Key != "sub" {
		return fmt.Errorf("%s: does not start with sub-<label>", name)
	}
	if err := checkOrder(ents); err != nil {
		return fmt.Errorf("%s: %w", name, err)
	}
	return nil
}
