package main

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// TestHelp renders every command's help: -h and --help exit 0 and print to stdout only; every
// flag is written --name with an upper-case argument name (or none, for a switch), as the
// README writes them; the top-level help names every command.
func TestHelp(t *testing.T) {
	var out, errOut bytes.Buffer
	if code := realMain(context.Background(), []string{"--help"}, &out, &errOut); code != 0 || errOut.Len() != 0 {
		t.Fatalf("--help: exit %d, stderr %q", code, errOut.String())
	}
	// The commands are those the top-level help lists (an unknown one would exit 2 below).
	var commands []string
	for _, m := range regexp.MustCompile(`(?m)^  ([a-z]+) `).FindAllStringSubmatch(out.String(), -1) {
		commands = append(commands, m[1])
	}
	if len(commands) < 5 {
		t.Fatalf("the top-level help lists %v", commands)
	}
	// An argument may show its own syntax (run --index AXIS=I).
	flagLine := regexp.MustCompile(`^  --[a-z][a-z0-9-]*( [A-Z][A-Z0-9_,=]*)?$`)
	for _, name := range commands {
		for _, h := range []string{"-h", "--help"} {
			out.Reset()
			errOut.Reset()
			code := realMain(context.Background(), []string{name, h}, &out, &errOut)
			if code != 0 || errOut.Len() != 0 {
				t.Errorf("%s %s: exit %d, stderr %q", name, h, code, errOut.String())
			}
			text := out.String()
			if !strings.HasPrefix(text, "usage: hubscope-helper "+name) {
				t.Errorf("%s %s: help starts %q", name, h, text[:min(len(text), 60)])
			}
			for _, line := range strings.Split(text, "\n") {
				if strings.HasPrefix(line, "  -") && !flagLine.MatchString(line) {
					t.Errorf("%s: flag line %q: want --name and an upper-case argument name", name, line)
				}
				if strings.Contains(line, "VALUE") || strings.Contains(line, "`") {
					t.Errorf("%s: %q: a flag without its argument name", name, line)
				}
			}
		}
	}
}

// TestUsageMistakes: a mistake exits 2 with its message on stderr; a settings problem names
// the flag.
func TestUsageMistakes(t *testing.T) {
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"run", "--no-such-flag"}, "no-such-flag"},
		{[]string{"run", "--density", "2", "--out", "o", "scan.nii"}, "--density: 2: want a fraction"},
		{[]string{"run", "--density", "0.1", "--knn", "4", "--out", "o", "scan.nii"}, "several thresholds"},
		{[]string{"run", "--correction", "fdr", "--out", "o", "scan.nii"}, "--correction: only applies"},
		{[]string{"frobnicate"}, "unknown command"},
	} {
		var out, errOut bytes.Buffer
		if code := realMain(context.Background(), c.args, &out, &errOut); code != 2 || !strings.Contains(errOut.String(), c.want) || out.Len() != 0 {
			t.Errorf("%v: exit %d, stderr %q, want 2 and %q", c.args, code, errOut.String(), c.want)
		}
	}
}

// TestExistingOutputNamesOverwrite: run refuses an existing --out and says how to replace it.
func TestExistingOutputNamesOverwrite(t *testing.T) {
	dir := t.TempDir()
	scan := filepath.Join(dir, "series.csv")
	var b strings.Builder
	for i := range 20 {
		fmt.Fprintf(&b, "%d,%d,%d\n", i%3, i%5, i%7)
	}
	if err := os.WriteFile(scan, []byte(b.String()), 0o600); err != nil {
		t.Fatal(err)
	}
	var out, errOut bytes.Buffer
	code := realMain(context.Background(), []string{"run", scan, "--out", dir, "--metrics", "none", "--backend", "cpu"}, &out, &errOut)
	if code != 1 || !strings.Contains(errOut.String(), "already exists") || !strings.Contains(errOut.String(), "--overwrite") {
		t.Fatalf("exit %d, stderr %q", code, errOut.String())
	}
}

// TestCompletion: the bash script parses (bash -n) and completes commands and a command's
// flags from the help texts; the zsh script names them too.
func TestCompletion(t *testing.T) {
	for _, shell := range []string{"bash", "zsh"} {
		var out, errOut bytes.Buffer
		if code := realMain(context.Background(), []string{"completion", shell}, &out, &errOut); code != 0 {
			t.Fatalf("completion %s: exit %d, %s", shell, code, errOut.String())
		}
		for _, want := range []string{"serve", "--density", "--overwrite", "--web-root"} {
			if !strings.Contains(out.String(), want) {
				t.Errorf("%s completion lacks %s", shell, want)
			}
		}
		if shell != "bash" {
			continue
		}
		bash, err := exec.LookPath("bash")
		if err != nil {
			t.Skip("no bash")
		}
		script := filepath.Join(t.TempDir(), "c.bash")
		if err := os.WriteFile(script, out.Bytes(), 0o600); err != nil {
			t.Fatal(err)
		}
		probe := `source ` + script + `; COMP_WORDS=(hubscope-helper run --dens); COMP_CWORD=2; _hubscope_helper; echo "${COMPREPLY[@]}"; COMP_WORDS=(hubscope-helper se); COMP_CWORD=1; _hubscope_helper; echo "${COMPREPLY[@]}"`
		got, err := exec.Command(bash, "-c", probe).CombinedOutput()
		if err != nil || string(got) != "--density\nseries serve\n" {
			t.Errorf("bash completion of 'run --dens' and 'se': %q (%v)", got, err)
		}
	}
	var errOut bytes.Buffer
	if code := realMain(context.Background(), []string{"completion", "fish"}, io.Discard, &errOut); code != 2 {
		t.Errorf("completion fish: exit %d", code)
	}
}
