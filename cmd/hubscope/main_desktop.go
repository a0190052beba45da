//go:build !js

package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"

	"fyne.io/fyne/v2"

	"github.com/hubscope/hubscope/app"
	"github.com/hubscope/hubscope/internal/smoke/dump"
	"github.com/hubscope/hubscope/ipc"
	"github.com/hubscope/hubscope/ipc/schema"
)

func main() {
	helper := flag.String("helper", "", "the helper program to start when none answers (default: hubscope-helper-cuda, falling back to hubscope-helper when it cannot start — each next to hubscope, else on PATH)")
	socket := flag.String("socket", "", "the helper's Unix socket (default: "+ipc.DefaultSocketPath()+")")
	open := flag.String("open", "", "analyse this scan (.nii or .nii.gz) with the default settings as soon as the helper answers")
	watchDir := flag.String("watch", "", "watch this folder: new scans there are analysed once they have finished copying")
	sweep := flag.String("sweep", "", "analyse with this threshold sweep (r=LO:HI:STEP, density=LO:HI:STEP or a list), as the Advanced settings' Threshold sweep")
	results := flag.String("open-results", "", "show this results folder as soon as the helper answers: a finished bundle (a scan's or a group's), a cohort's folder or a comparison's, as Open results folder… does")
	denoise := flag.String("denoise", "", "analyse with this cleaning preset (auto, simple, scrubbing, compcor, none), as the settings' Cleaning picker")
	norm := flag.String("norm", "", "compare every scan analysed in this session with this normative folder (built by hubscope-helper norm build), instead of the one chosen in the settings")
	smoke := flag.String("smoke-dump", "", "once the first result is shown, write a screenshot of the window, the 3D view's place in it, the hub table (TSV), the slices and the report to this folder; then show the Slices tab when the file show-slices appears there (for scripts/gui-smoke.sh)")
	flag.Usage = func() {
		fmt.Fprintf(flag.CommandLine.Output(), "usage: hubscope [flags]\n\nHubScope %s: voxel-wise functional brain networks, hubs and modules.\n\n", schema.Version)
		flag.PrintDefaults()
	}
	flag.Parse()
	if flag.NArg() > 0 {
		fmt.Fprintf(os.Stderr, "hubscope: unexpected argument %q (use --open FILE to analyse a scan)\n", flag.Arg(0))
		os.Exit(2)
	}
	if *open != "" {
		abs, err := filepath.Abs(*open)
		if err == nil {
			_, err = os.Stat(abs)
		}
		if err != nil {
			fmt.Fprintf(os.Stderr, "hubscope: --open %s: %v\n", *open, err)
			os.Exit(2)
		}
		*open = abs
	}
	if *results != "" {
		abs, err := filepath.Abs(*results)
		if err == nil {
			_, err = os.Stat(abs)
		}
		if err != nil {
			fmt.Fprintf(os.Stderr, "hubscope: --open-results %s: %v\n", *results, err)
			os.Exit(2)
		}
		*results = abs
	}
	if *norm != "" {
		abs, err := filepath.Abs(*norm)
		if err == nil {
			_, err = os.Stat(filepath.Join(abs, "norm.json"))
		}
		if err != nil {
			fmt.Fprintf(os.Stderr, "hubscope: --norm %s: not a normative folder (%v)\n", *norm, err)
			os.Exit(2)
		}
		*norm = abs
	}
	cfg := config{connect: func(ctx context.Context) (ipc.Service, error) {
		path, fallback, err := helperPaths(*helper)
		if err != nil {
			return nil, err
		}
		return ipc.Connect(ctx, ipc.LaunchOptions{Socket: *socket, HelperPath: path, Fallback: fallback})
	}}
	var dmp *dump.Dump
	if *smoke != "" {
		dmp = dump.New(*smoke)
		cfg.onResult = dmp.Result
		cfg.onComparison = dmp.Comparison
	}
	cfg.started = func(u *app.UI, w fyne.Window) {
		if dmp != nil {
			dmp.SetWindow(w)
			dmp.SetUI(u)
		}
		if *norm != "" {
			u.Settings.Norm.Use(*norm)
		}
		if *denoise != "" {
			if err := u.Settings.SetCleaning(*denoise); err != nil {
				fmt.Fprintf(os.Stderr, "hubscope: --denoise: %v\n", err)
				os.Exit(2)
			}
		}
		if *sweep != "" {
			u.Settings.SetSweep(*sweep)
			if _, err := u.Settings.Settings(); err != nil {
				fmt.Fprintf(os.Stderr, "hubscope: --sweep %s: %v\n", *sweep, err)
				os.Exit(2)
			}
		}
		if *open != "" {
			u.OpenScans(*open)
		}
		if *results != "" {
			u.OpenResults(*results)
		}
		if *watchDir != "" {
			u.WatchFolder(*watchDir)
		}
	}
	run(cfg)
}

// helperPaths finds the helper: the --helper flag, else the CUDA build hubscope-helper-cuda
// with the CPU build hubscope-helper as its fallback (ipc.LaunchOptions.Fallback: the CUDA
// build cannot even start without the NVIDIA driver), each looked for next to this program,
// then on PATH.
func helperPaths(flagged string) (path, fallback string, err error) {
	if flagged != "" {
		if _, err := os.Stat(flagged); err != nil {
			return "", "", fmt.Errorf("--helper %s: %w", flagged, err)
		}
		return flagged, "", nil
	}
	cuda, cpu := findHelper("hubscope-helper-cuda"), findHelper("hubscope-helper")
	switch {
	case cuda != "" && cpu != "":
		return cuda, cpu, nil
	case cuda != "":
		return cuda, "", nil
	case cpu != "":
		return cpu, "", nil
	}
	return "", "", fmt.Errorf("hubscope-helper is neither next to hubscope nor on the PATH")
}

// findHelper returns the program name next to this executable, else on PATH, else "".
func findHelper(name string) string {
	if exe, err := os.Executable(); err == nil {
		p := filepath.Join(filepath.Dir(exe), name)
		if st, err := os.Stat(p); err == nil && !st.IsDir() {
			return p
		}
	}
	if p, err := exec.LookPath(name); err == nil {
		return p
	}
	return ""
}
