// Command hubscope-helper is HubScope's engine: it turns a resting-state fMRI scan into a
// voxel-wise functional network and analyses it, on an NVIDIA GPU (built with -tags cuda)
// or on the CPU. The desktop app drives it over local IPC (serve); on its own it is the
// batch tool (run), the phantom generator (synth) and the benchmark harness (bench).
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"syscall"
)

const usage = `usage: hubscope-helper <command> [flags]

commands:
  run SCAN --out DIR   build the functional network of a scan (.nii, .nii.gz, .hdr/.img,
                       a DICOM folder, .zip or DICOMDIR, or a time-series matrix
                       .csv/.tsv/.npy) and write a results bundle;
                       "run --demo" analyses the built-in phantom
  series DICOM         list the series of a DICOM folder, .zip or DICOMDIR and say which
                       one run would analyse
  group SCANS… --out DIR
                       the group-mean network of several subjects on one grid (mean Fisher z
                       or mean r, then any threshold or sweep, then the metrics); --bids DIR
  cohort BIDS --out D  every run of a BIDS dataset (resumable), then a subjects × measures table
  compare DERIV --group-column C
                       two groups of a cohort: Welch t and permutations per measure and node, FDR
  norm build DERIV --out N
                       a normative cohort (per-voxel mean and SD, cohort hubs); run … --norm N
  synth --out F        write a phantom scan with planted modules and hubs (+ its ground truth)
  bench                time HubScope's workloads, side by side with the peer pipelines
  serve                run the helper daemon for the desktop app (local IPC)
  version              print the version and the compute devices found

Run "hubscope-helper <command> -h" for a command's flags.
`

// errUsage marks errors already explained by a usage message (exit status 2).
var errUsage = errors.New("usage")

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	os.Exit(realMain(ctx, os.Args[1:], os.Stdout, os.Stderr))
}

func realMain(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	if len(args) == 0 {
		fmt.Fprint(stderr, usage)
		return 2
	}
	cmds := map[string]func(context.Context, []string, io.Writer, io.Writer) error{
		"run":     cmdRun,
		"series":  cmdSeries,
		"synth":   cmdSynth,
		"group":   cmdGroup,
		"cohort":  cmdCohort,
		"compare": cmdCompare,
		"norm":    cmdNorm,
		"bench":   cmdBench,
		"serve":   cmdServe,
		"version": cmdVersion,
	}
	name := args[0]
	if name == "-h" || name == "--help" || name == "help" {
		fmt.Fprint(stdout, usage)
		return 0
	}
	cmd, ok := cmds[name]
	if !ok {
		fmt.Fprintf(stderr, "hubscope-helper: unknown command %q\n\n%s", name, usage)
		return 2
	}
	err := cmd(ctx, args[1:], stdout, stderr)
	switch {
	case err == nil:
		return 0
	case errors.Is(err, errUsage), errors.Is(err, flag.ErrHelp):
		return 2
	case errors.Is(err, context.Canceled):
		fmt.Fprintln(stderr, "hubscope-helper: cancelled; nothing was written")
		return 130
	default:
		fmt.Fprintf(stderr, "hubscope-helper %s: %v\n", name, err)
		return 1
	}
}

// newFlags returns a flag set that reports errors through errUsage instead of exiting.
func newFlags(name, synopsis string, stderr io.Writer) *flag.FlagSet {
	fs := flag.NewFlagSet(name, flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.Usage = func() {
		fmt.Fprintf(stderr, "usage: hubscope-helper %s\n\nflags:\n", synopsis)
		fs.PrintDefaults()
	}
	return fs
}

// parse parses flags and positional arguments interleaved (flags may follow the scan path).
func parse(fs *flag.FlagSet, args []string) ([]string, error) {
	var pos []string
	for {
		if err := fs.Parse(args); err != nil {
			if errors.Is(err, flag.ErrHelp) {
				return nil, err
			}
			return nil, errUsage
		}
		args = fs.Args()
		if len(args) == 0 {
			return pos, nil
		}
		pos = append(pos, args[0])
		args = args[1:]
	}
}
