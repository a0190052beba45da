// Package bids finds the files that belong to an fMRIPrep preprocessed run by BIDS naming:
// its confounds table (found the way nilearn 0.10.4's load_confounds finds it), its brain
// mask and the RepetitionTime of its JSON sidecar.
package bids

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
)

// entities splits a BIDS file name into its key-value entities (in order) and its suffix
// with extension: sub-01_task-rest_desc-preproc_bold.nii.gz → [sub-01 task-rest desc-preproc],
// "bold.nii.gz". ok is false for a name that is not BIDS-like.
func entities(name string) (kv []string, suffix string, ok bool) {
	parts := strings.Split(name, "_")
	if len(parts) < 2 {
		return nil, "", false
	}
	for _, p := range parts[:len(parts)-1] {
		if k, v, found := strings.Cut(p, "-"); !found || k == "" || v == "" {
			return nil, "", false
		}
	}
	return parts[:len(parts)-1], parts[len(parts)-1], true
}

// IsPreprocBold reports whether the file is named like fMRIPrep's preprocessed BOLD image.
func IsPreprocBold(path string) bool {
	kv, suffix, ok := entities(filepath.Base(path))
	return ok && (suffix == "bold.nii.gz" || suffix == "bold.nii") && contains(kv, "desc-preproc")
}

func contains(kv []string, e string) bool {
	for _, x := range kv {
		if x == e {
			return true
		}
	}
	return false
}

// Confounds returns the confounds table beside an fMRIPrep BOLD image: every subset of the
// image's entities that keeps desc (set to desc-confounds), with _timeseries.tsv or
// _regressors.tsv, longest name first — nilearn's candidates. It returns "" and no error when
// none exists, and an error when the name is not BIDS-like or several match.
func Confounds(bold string) (string, error) {
	dir := filepath.Dir(bold)
	kv, _, ok := entities(filepath.Base(bold))
	if !ok {
		return "", nil
	}
	fields := make([]string, 0, len(kv)+1)
	hasDesc := false
	for _, e := range kv {
		if strings.HasPrefix(e, "desc-") {
			e, hasDesc = "desc-confounds", true
		}
		fields = append(fields, e)
	}
	if !hasDesc {
		fields = append(fields, "desc-confounds")
	}
	seen := map[string]bool{}
	var found []string
	for mask := 1; mask < 1<<len(fields); mask++ {
		var sel []string
		desc := false
		for i, f := range fields {
			if mask&(1<<i) != 0 {
				sel = append(sel, f)
				desc = desc || f == "desc-confounds"
			}
		}
		if !desc {
			continue
		}
		for _, suf := range []string{"_timeseries.tsv", "_regressors.tsv"} {
			p := filepath.Join(dir, strings.Join(sel, "_")+suf)
			if seen[p] {
				continue
			}
			seen[p] = true
			if st, err := os.Stat(p); err == nil && st.Mode().IsRegular() {
				found = append(found, p)
			}
		}
	}
	switch len(found) {
	case 0:
		return "", nil
	case 1:
		return found[0], nil
	}
	sort.Strings(found)
	return "", fmt.Errorf("%s: more than one confounds file matches it (%s): name one with --confounds", bold, strings.Join(found, ", "))
}

// Mask returns fMRIPrep's brain mask for the BOLD image (the same entities with
// desc-brain_mask), or "" when there is none.
func Mask(bold string) string {
	kv, suffix, ok := entities(filepath.Base(bold))
	if !ok || !strings.HasPrefix(suffix, "bold.nii") {
		return ""
	}
	var out []string
	for _, e := range kv {
		if !strings.HasPrefix(e, "desc-") {
			out = append(out, e)
		}
	}
	for _, ext := range []string{".nii.gz", ".nii"} {
		p := filepath.Join(filepath.Dir(bold), strings.Join(append(out, "desc-brain"), "_")+"_mask"+ext)
		if _, err := os.Stat(p); err == nil {
			return p
		}
	}
	return ""
}

// RepetitionTime reads RepetitionTime (seconds) from the image's JSON sidecar (same name,
// .json). It returns 0 and no error when there is no sidecar or no such field.
func RepetitionTime(bold string) (float64, string, error) {
	base := strings.TrimSuffix(strings.TrimSuffix(bold, ".gz"), ".nii")
	p := base + ".json"
	b, err := os.ReadFile(p)
	if errors.Is(err, os.ErrNotExist) {
		return 0, "", nil
	}
	if err != nil {
		return 0, "", err
	}
	var side struct {
		RepetitionTime *float64
	}
	if err := json.Unmarshal(b, &side); err != nil {
		return 0, "", fmt.Errorf("%s: %v", p, err)
	}
	if side.RepetitionTime == nil {
		return 0, "", nil
	}
	return *side.RepetitionTime, p, nil
}

// Entities select a run in a BIDS derivatives folder: participant (sub), session (ses),
// task, run and space; empty ones match anything.
type Entities struct {
	Participant, Session, Task, Run, Space string
}

// FindPreproc returns the one fMRIPrep preprocessed BOLD image under root whose entities
// match e, or an error naming what was found: none, or several (listed, so that one more
// entity can be given).
func FindPreproc(root string, e Entities) (string, error) {
	want := map[string]string{"sub": strings.TrimPrefix(e.Participant, "sub-"), "ses": strings.TrimPrefix(e.Session, "ses-"),
		"task": strings.TrimPrefix(e.Task, "task-"), "run": strings.TrimPrefix(e.Run, "run-"), "space": strings.TrimPrefix(e.Space, "space-")}
	var found []string
	err := filepath.WalkDir(root, func(p string, d os.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() || !IsPreprocBold(p) {
			return nil
		}
		kv, _, _ := entities(d.Name())
		have := map[string]string{}
		for _, x := range kv {
			k, v, _ := strings.Cut(x, "-")
			have[k] = v
		}
		for k, v := range want {
			if v == "" {
				continue
			}
			hv := have[k]
			if k == "run" { // run-1 and run-01 are the same run
				hv, v = strings.TrimLeft(hv, "0"), strings.TrimLeft(v, "0")
			}
			if hv != v {
				return nil
			}
		}
		found = append(found, p)
		return nil
	})
	if err != nil {
		return "", err
	}
	sort.Strings(found)
	switch len(found) {
	case 0:
		return "", fmt.Errorf("%s: no *_desc-preproc_bold.nii.gz matches %s", root, e.describe())
	case 1:
		return found[0], nil
	}
	names := make([]string, len(found))
	for i, f := range found {
		names[i] = filepath.Base(f)
	}
	return "", fmt.Errorf("%s: %d preprocessed runs match %s (%s): name one more of --participant, --session, --task, --run, --space", root, len(found), e.describe(), strings.Join(names, ", "))
}

func (e Entities) describe() string {
	var parts []string
	for _, kv := range [][2]string{{"sub", e.Participant}, {"ses", e.Session}, {"task", e.Task}, {"run", e.Run}, {"space", e.Space}} {
		if kv[1] != "" {
			parts = append(parts, kv[0]+"-"+strings.TrimPrefix(kv[1], kv[0]+"-"))
		}
	}
	if len(parts) == 0 {
		return "any entities"
	}
	return strings.Join(parts, " ")
}
