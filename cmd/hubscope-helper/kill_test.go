package main

import (
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/hubscope/hubscope/helper/bundle"
	"github.com/hubscope/hubscope/helper/dicom"
	"github.com/hubscope/hubscope/helper/dicom/dicomtest"
)

// bundleFiles lists a bundle's files (relative paths, sorted) and checks that every JSON file
// in it parses.
func bundleFiles(t *testing.T, dir string) []string {
	t.Helper()
	var names []string
	err := filepath.WalkDir(dir, func(p string, d os.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		rel, _ := filepath.Rel(dir, p)
		names = append(names, rel)
		if strings.HasSuffix(p, ".json") {
			b, err := os.ReadFile(p)
			if err != nil {
				return err
			}
			if !json.Valid(b) {
				t.Errorf("%s is not complete JSON", p)
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	slices.Sort(names)
	return names
}

// TestKill9DuringRun kills `hubscope-helper run` (SIGKILL: no cleanup at all) at random
// points of a run, 20 times (3 under -race), into the same output folder with --overwrite.
// After every kill the output folder is either absent or a complete bundle (every file of a
// finished run, its JSON whole); a rerun replaces it and removes the killed runs' partial
// folders; nothing is left in the temporary folder (TMPDIR).
func TestKill9DuringRun(t *testing.T) {
	scanPath, maskPath := phantomScan(t, 8)
	parent := t.TempDir()
	tmp := t.TempDir()
	out := filepath.Join(parent, "b")
	args := []string{"run", scanPath, "--mask", maskPath, "--out", out, "--overwrite", "--backend", "cpu", "--metrics", "basic", "--keep-series"}
	start := func() *exec.Cmd {
		cmd := exec.Command(os.Args[0], args...)
		cmd.Env = append(os.Environ(), helperEnv+"=1", "TMPDIR="+tmp)
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		return cmd
	}
	// One complete run gives the file list and the time a run takes.
	t0 := time.Now()
	if err := start().Wait(); err != nil {
		t.Fatalf("reference run: %v", err)
	}
	full := time.Since(t0)
	want := bundleFiles(t, out)
	os.RemoveAll(out)

	kills := 20
	if raceEnabled {
		kills = 3
	}
	rng := rand.New(rand.NewPCG(17, 9))
	completed := 0
	for i := 0; i < kills; i++ {
		cmd := start()
		time.Sleep(time.Duration(rng.Int64N(int64(full))))
		cmd.Process.Kill()
		if err := cmd.Wait(); err == nil {
			completed++ // finished before the kill
		}
		if _, err := os.Lstat(out); err == nil {
			if got := bundleFiles(t, out); !slices.Equal(got, want) {
				t.Fatalf("kill %d: %s looks like a bundle but holds %v, want %v", i, out, got, want)
			}
		} else if _, err := os.Stat(filepath.Join(out, bundle.Marker)); err == nil {
			t.Fatalf("kill %d: marker without a bundle", i)
		}
	}
	t.Logf("%d kills over a %v run (%d runs finished first)", kills, full.Round(time.Millisecond), completed)
	if err := start().Wait(); err != nil {
		t.Fatalf("rerun after the kills: %v", err)
	}
	if got := bundleFiles(t, out); !slices.Equal(got, want) {
		t.Fatalf("rerun wrote %v, want %v", got, want)
	}
	if ents, _ := os.ReadDir(parent); len(ents) != 1 {
		var names []string
		for _, e := range ents {
			names = append(names, e.Name())
		}
		t.Errorf("beside the bundle after the rerun: %v", names)
	}
	if ents, _ := os.ReadDir(tmp); len(ents) != 0 {
		t.Errorf("left in TMPDIR: %v", ents)
	}
}

// TestKill9LeavesNoTemp kills `group --mask-rule union` and `synth` (SIGKILL) at random
// points, 6 times each (2 under -race): nothing is ever left in TMPDIR, and a rerun leaves no
// temporary file beside the outputs. Both once staged a mask in TMPDIR (the union of the
// subjects' masks; the embedded MNI mask) and a kill in that window left the folder; they now
// read the masks in memory. A killed synth left its .s.nii.gz.*.tmp beside the output for
// good; the next writer of the file now removes it.
func TestKill9LeavesNoTemp(t *testing.T) {
	dir := t.TempDir()
	var subs []string
	for i := range 3 {
		p := filepath.Join(dir, fmt.Sprintf("sub%d.nii.gz", i))
		if code, _, stderr := runHelper(t, "synth", "--voxel-mm", "14", "--length", "40", "--seed", fmt.Sprint(i+1), "--out", p); code != 0 {
			t.Fatalf("synth: %s", stderr)
		}
		subs = append(subs, p)
	}
	kills := 6
	if raceEnabled {
		kills = 2
	}
	rng := rand.New(rand.NewPCG(5, 11))
	for _, args := range [][]string{
		append(append([]string{"group"}, subs...), "--mask-rule", "union", "--backend", "cpu", "--metrics", "none", "--out", filepath.Join(dir, "g"), "--overwrite"),
		{"synth", "--voxel-mm", "10", "--length", "60", "--out", filepath.Join(dir, "s.nii.gz")},
	} {
		tmp := t.TempDir()
		run := func() *exec.Cmd {
			cmd := exec.Command(os.Args[0], args...)
			cmd.Env = append(os.Environ(), helperEnv+"=1", "TMPDIR="+tmp)
			if err := cmd.Start(); err != nil {
				t.Fatal(err)
			}
			return cmd
		}
		t0 := time.Now()
		if err := run().Wait(); err != nil {
			t.Fatalf("%s: %v", args[0], err)
		}
		full := time.Since(t0)
		for i := 0; i < kills; i++ {
			cmd := run()
			time.Sleep(time.Duration(rng.Int64N(int64(full))))
			cmd.Process.Kill()
			cmd.Wait()
			if ents, _ := os.ReadDir(tmp); len(ents) != 0 {
				t.Fatalf("%s killed after %v: left in TMPDIR %v", args[0], full, ents[0].Name())
			}
		}
		// A finished rerun leaves no killed run's temporary file beside its outputs (they
		// carry their writer's PID, and the next writer of the same file removes them).
		if err := run().Wait(); err != nil {
			t.Fatalf("%s rerun: %v", args[0], err)
		}
		if left, _ := filepath.Glob(filepath.Join(dir, ".*.tmp")); len(left) != 0 {
			t.Errorf("%s: beside the outputs after the rerun: %v", args[0], left)
		}
	}
}

// TestKill9RealignDICOMLeavesNoTemp kills a run that realigns (--realign on) and one that
// converts DICOM with dcm2niix (a 12-volume series made from the real Siemens mosaic) at
// random points, 6 times each (once under -race). Both keep a private folder in TMPDIR for
// most of the run (the realigned series; the conversion), which kill -9 leaves behind; the
// next helper removes it (its name carries the dead maker's PID), so after a finished
// rerun TMPDIR holds nothing. The DICOM case is skipped without dcm2niix or the data, and
// fails then under HUBSCOPE_STRICT.
func TestKill9RealignDICOMLeavesNoTemp(t *testing.T) {
	voxel := 8.0
	if raceEnabled {
		voxel = 12 // a realigning run of the 8 mm phantom takes 20 s under -race
	}
	scanPath, maskPath := phantomScan(t, voxel)
	cases := []struct {
		name string
		args func(t *testing.T) []string
	}{
		{"realign", func(*testing.T) []string { return []string{scanPath, "--mask", maskPath, "--realign", "on"} }},
		{"dicom", func(t *testing.T) []string {
			data := dicomtest.Converted(t, dicom.FindTool)
			src := t.TempDir()
			first, _ := filepath.Glob(filepath.Join(data, "ax_asc_35sl", "MR.*"))
			if len(first) == 0 {
				t.Fatalf("no ax_asc_35sl files in %s", data)
			}
			if _, err := dicomtest.Series(first[0], src, 12, 3, 0.05, 7); err != nil {
				t.Fatal(err)
			}
			mask := dicomtest.BoxMask(t, data)
			return []string{src, "--mask", mask}
		}},
	}
	kills := 6
	if raceEnabled {
		kills = 1 // CI's suite runs under -race: a run of each takes 4–12 s there
	}
	rng := rand.New(rand.NewPCG(23, 4))
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			out := filepath.Join(t.TempDir(), "b")
			args := append(append([]string{"run"}, c.args(t)...), "--out", out, "--overwrite", "--backend", "cpu", "--metrics", "basic")
			tmp := t.TempDir()
			var stderr strings.Builder
			start := func() *exec.Cmd {
				cmd := exec.Command(os.Args[0], args...)
				cmd.Env = append(os.Environ(), helperEnv+"=1", "TMPDIR="+tmp)
				stderr.Reset()
				cmd.Stderr = &stderr
				if err := cmd.Start(); err != nil {
					t.Fatal(err)
				}
				return cmd
			}
			t0 := time.Now()
			if err := start().Wait(); err != nil {
				t.Fatalf("reference run: %v\n%s", err, stderr.String())
			}
			full := time.Since(t0)
			left := 0 // kills that left a folder in TMPDIR (swept by the next start)
			for i := 0; i < kills; i++ {
				cmd := start()
				time.Sleep(time.Duration(rng.Int64N(int64(full))))
				cmd.Process.Kill()
				cmd.Wait()
				if ents, _ := os.ReadDir(tmp); len(ents) != 0 {
					left++
				}
			}
			t.Logf("%d kills over a %v run, %d left a folder in TMPDIR", kills, full.Round(time.Millisecond), left)
			if err := start().Wait(); err != nil {
				t.Fatalf("rerun after the kills: %v\n%s", err, stderr.String())
			}
			if _, err := os.Stat(filepath.Join(out, bundle.Marker)); err != nil {
				t.Errorf("rerun: no complete bundle: %v", err)
			}
			if ents, _ := os.ReadDir(tmp); len(ents) != 0 {
				var names []string
				for _, e := range ents {
					names = append(names, e.Name())
				}
				t.Errorf("left in TMPDIR after the rerun: %v", names)
			}
		})
	}
}
