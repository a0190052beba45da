package synth

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"

	"github.com/hubscope/hubscope/helper/progress"
	"github.com/hubscope/hubscope/helper/scan"
)

// individualSeed is the seed of a subject's module signals and noise (Params.SubjectSeed).
func (p Params) individualSeed() int64 {
	if p.SubjectSeed != 0 {
		return p.SubjectSeed
	}
	return p.Seed
}

// lesionHubs removes from the planted hubs those whose own module is module (0: none) and
// returns the remaining hubs, their modules and the removed ones.
func lesionHubs(labels []int32, hubs []int, mods [][]int, module int) ([]int, [][]int, []int) {
	if module == 0 {
		return hubs, mods, nil
	}
	var keep []int
	var keepMods [][]int
	var gone []int
	for h, v := range hubs {
		if int(labels[v]) == module {
			gone = append(gone, v)
			continue
		}
		keep = append(keep, v)
		keepMods = append(keepMods, mods[h])
	}
	return keep, keepMods, gone
}

// CohortOptions describe a phantom cohort: Subjects healthy subjects (sub-01 …) sharing the
// layout of Params.Seed with individual signals and noise, and, with Lesion, one patient
// (sub-patient01) whose planted hubs in LesionModule (default: the module holding the most
// planted hubs) are removed.
type CohortOptions struct {
	Subjects     int
	Lesion       bool
	LesionModule int
	Patients     int // with Lesion: how many patients (sub-patient01 …; default 1)
}

// CohortTruth is what WriteCohort planted: the subjects' labels in participants.tsv order,
// the shared layout and, for the patient, the removed hubs (node indices in the mask).
type CohortTruth struct {
	Subjects []string
	Layout   *Truth
	Patient  string
	Lesioned []int
}

// CohortScan is the BIDS path of a subject's scan under dir.
func CohortScan(dir, label string) string {
	return filepath.Join(dir, "sub-"+label, "func", "sub-"+label+"_task-rest_bold.nii.gz")
}

// WriteCohort writes a BIDS folder: dataset_description.json, participants.tsv
// (participant_id, diagnosis control|patient, age, sex), every subject's
// sub-<label>/func/sub-<label>_task-rest_bold.nii.gz, and the ground truth in truth/
// (modules.nii.gz, hubs.tsv of the layout; lesion.tsv listing the patient's removed hubs),
// task-rest_bold.json (TaskName, RepetitionTime) and a .bidsignore naming truth/.
// dir must not exist yet or be empty; on error what was written is removed.
func WriteCohort(ctx context.Context, mask scan.Mask, affine [4][4]float64, p Params, o CohortOptions, dir string, rep progress.Reporter) (ct *CohortTruth, err error) {
	if o.Subjects < 1 {
		return nil, fmt.Errorf("synth: a cohort of %d subjects: want at least 1", o.Subjects)
	}
	if err := p.Validate(mask.Count()); err != nil {
		return nil, err
	}
	if o.Lesion && o.LesionModule == 0 { // the module holding the most planted hubs
		g, err := newGenerator(mask, affine, p)
		if err != nil {
			return nil, err
		}
		count := make([]int, p.Modules+1)
		for _, v := range g.truth.Hubs {
			count[g.truth.Modules[v]]++
		}
		o.LesionModule = 1
		for m := range count {
			if count[m] > count[o.LesionModule] {
				o.LesionModule = m
			}
		}
	}
	if ents, err := os.ReadDir(dir); err == nil && len(ents) > 0 {
		return nil, fmt.Errorf("synth: %s exists and is not empty", dir)
	}
	if err := os.MkdirAll(filepath.Join(dir, "truth"), 0o755); err != nil {
		return nil, err
	}
	defer func() {
		if err != nil {
			os.RemoveAll(dir)
		}
	}()
	ct = &CohortTruth{}
	var rows []string
	digits := len(fmt.Sprint(o.Subjects))
	if digits < 2 {
		digits = 2
	}
	write := func(label string, sp Params, diagnosis string, k int) error {
		out := CohortScan(dir, label)
		if err := os.MkdirAll(filepath.Dir(out), 0o755); err != nil {
			return err
		}
		truth, err := Write(ctx, mask, affine, sp, out, rep)
		if err != nil {
			return err
		}
		mod, hub := TruthPaths(out)
		if ct.Layout == nil {
			ct.Layout = truth
			if err := os.Rename(mod, filepath.Join(dir, "truth", "modules.nii.gz")); err != nil {
				return err
			}
			if err := os.Rename(hub, filepath.Join(dir, "truth", "hubs.tsv")); err != nil {
				return err
			}
		} else {
			os.Remove(mod)
			os.Remove(hub)
		}
		if sp.LesionModule != 0 && ct.Patient == "" {
			ct.Patient, ct.Lesioned = label, truth.Lesioned
		}
		ct.Subjects = append(ct.Subjects, label)
		sex := "F"
		if k%2 == 1 {
			sex = "M"
		}
		rows = append(rows, fmt.Sprintf("sub-%s\t%s\t%d\t%s", label, diagnosis, 20+(k*17)%50, sex)) // ages not ordered by group
		return nil
	}
	for s := 1; s <= o.Subjects; s++ {
		sp := SubjectParams(p, s)
		if err := write(fmt.Sprintf("%0*d", digits, s), sp, "control", s); err != nil {
			return nil, err
		}
	}
	if o.Lesion {
		for k := 1; k <= max(1, o.Patients); k++ {
			sp := p
			sp.SubjectSeed = p.Seed*1_000_003 + int64(o.Subjects+k)
			sp.LesionModule = o.LesionModule
			if err := write(fmt.Sprintf("patient%02d", k), sp, "patient", o.Subjects+k); err != nil {
				return nil, err
			}
		}
		var b strings.Builder
		b.WriteString("node\ti\tj\tk\n")
		for _, v := range ct.Lesioned {
			f := -1
			for c, in, idx := 0, mask.In, 0; idx < len(in); idx++ {
				if in[idx] {
					if c == v {
						f = idx
						break
					}
					c++
				}
			}
			nx, ny := mask.Dims[0], mask.Dims[1]
			fmt.Fprintf(&b, "%d\t%d\t%d\t%d\n", v, f%nx, f/nx%ny, f/(nx*ny))
		}
		if err := os.WriteFile(filepath.Join(dir, "truth", "lesion.tsv"), []byte(b.String()), 0o644); err != nil {
			return nil, err
		}
	}
	desc := `{"Name": "HubScope phantom cohort", "BIDSVersion": "1.8.0", "DatasetType": "raw"}` + "\n"
	if err := os.WriteFile(filepath.Join(dir, "dataset_description.json"), []byte(desc), 0o644); err != nil {
		return nil, err
	}
	// The BIDS validator's required BOLD metadata, once for every run by the inheritance
	// principle (BIDS 1.8, "The Inheritance Principle"), and its .bidsignore for the ground
	// truth, which is not BIDS data.
	side := fmt.Sprintf(`{"TaskName": "rest", "RepetitionTime": %g}`+"\n", p.TR)
	if err := os.WriteFile(filepath.Join(dir, "task-rest_bold.json"), []byte(side), 0o644); err != nil {
		return nil, err
	}
	if err := os.WriteFile(filepath.Join(dir, ".bidsignore"), []byte("truth/\n"), 0o644); err != nil {
		return nil, err
	}
	tsv := "participant_id\tdiagnosis\tage\tsex\n" + strings.Join(rows, "\n") + "\n"
	if err := os.WriteFile(filepath.Join(dir, "participants.tsv"), []byte(tsv), 0o644); err != nil {
		return nil, err
	}
	return ct, nil
}

// SubjectParams are the parameters of WriteCohort's control number s (1-based, sub-01 …): the
// layout of p.Seed with the subject's own module signals and noise.
func SubjectParams(p Params, s int) Params {
	p.SubjectSeed = p.Seed*1_000_003 + int64(s)
	return p
}

// CohortMatrix generates S subjects of the phantom p on mask in memory, as WriteCohort's
// controls sub-01 … before quantisation, in the layout the group backends take: an N × S·L
// float32 matrix whose row v holds node v's series of subject 1, then of subject 2, …
// Subjects are generated on up to workers goroutines (≤ 0: one).
func CohortMatrix(mask scan.Mask, affine [4][4]float64, p Params, subjects, workers int) ([]float32, int, error) {
	if subjects < 1 {
		return nil, 0, fmt.Errorf("synth: a cohort of %d subjects: want at least 1", subjects)
	}
	n, L := mask.Count(), p.Length
	if err := p.Validate(n); err != nil {
		return nil, 0, err
	}
	x := make([]float32, n*subjects*L)
	next := make(chan int)
	errs := make(chan error, subjects)
	var wg sync.WaitGroup
	for range max(1, min(workers, subjects)) {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for s := range next {
				sc, _, err := Generate(mask, affine, SubjectParams(p, s+1))
				if err != nil {
					errs <- err
					continue
				}
				for v := range n {
					copy(x[(v*subjects+s)*L:(v*subjects+s+1)*L], sc.Data[v*L:(v+1)*L])
				}
			}
		}()
	}
	for s := range subjects {
		next <- s
	}
	close(next)
	wg.Wait()
	close(errs)
	if err := <-errs; err != nil {
		return nil, 0, err
	}
	return x, n, nil
}
