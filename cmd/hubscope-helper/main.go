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
	"github.com/hubscope/hubscope/ipc/settings"
	"io"
	"os"
	"os/signal"
	"strconv"
	"strings"
	"syscall"

	"github.com/hubscope/hubscope/helper/scratch"
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
  report BUNDLE        write the clinician's report of a results bundle: --pdf FILE (one to
                       three pages; default BUNDLE/report.pdf) and/or --html FILE
  synth --out F        write a phantom scan with planted modules and hubs (+ its ground truth)
  bench                time HubScope's workloads, side by side with the peer pipelines
  serve                run the helper daemon for the desktop app (local IPC)
  version              print the version and the compute devices found
  completion bash|zsh  print a shell completion script (source <(hubscope-helper completion bash))

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
		"run":        cmdRun,
		"series":     cmdSeries,
		"synth":      cmdSynth,
		"report":     cmdReport,
		"group":      cmdGroup,
		"cohort":     cmdCohort,
		"compare":    cmdCompare,
		"norm":       cmdNorm,
		"bench":      cmdBench,
		"serve":      cmdServe,
		"version":    cmdVersion,
		"completion": cmdCompletion,
	}
	name := args[0]
	if name == "-h" || name == "-help" || name == "--help" || name == "help" {
		fmt.Fprint(stdout, usage)
		return 0
	}
	cmd, ok := cmds[name]
	if !ok {
		fmt.Fprintf(stderr, "hubscope-helper: unknown command %q\n\n%s", name, usage)
		return 2
	}
	// A helper killed with kill -9 ran no cleanup: its temporary folders (a realignment's,
	// a DICOM conversion's) stay in TMPDIR. Each carries its maker's PID, so every command
	// first removes those of this user's helpers that no longer run.
	scratch.Sweep("")
	err := cmd(ctx, args[1:], stdout, stderr)
	switch {
	case err == nil:
		return 0
	case errors.Is(err, flag.ErrHelp):
		return 0 // the help went to stdout
	case errors.Is(err, errUsage):
		return 2
	case errors.Is(err, context.Canceled):
		fmt.Fprintln(stderr, "hubscope-helper: cancelled; nothing was written")
		return 130
	default:
		// The engine's own messages often start with the command's word ("group: …"):
		// say it once.
		if msg := err.Error(); strings.HasPrefix(msg, name+": ") {
			fmt.Fprintf(stderr, "hubscope-helper %s\n", msg)
		} else {
			fmt.Fprintf(stderr, "hubscope-helper %s: %s\n", name, msg)
		}
		return 1
	}
}

// newFlags returns a flag set that reports errors through errUsage instead of exiting. Its
// help (-h, --help) goes to stdout; a mistake's message and the help go to stderr.
func newFlags(name, synopsis string, stdout, stderr io.Writer) *flagSet {
	fs := &flagSet{FlagSet: flag.NewFlagSet(name, flag.ContinueOnError), synopsis: synopsis, stdout: stdout}
	fs.SetOutput(stderr)
	fs.Usage = func() { printUsage(stderr, fs.FlagSet, synopsis) }
	return fs
}

// flagSet is a command's flags, with what its help needs.
type flagSet struct {
	*flag.FlagSet
	synopsis string
	stdout   io.Writer
}

// printUsage writes a command's synopsis and its flags, each as --name ARG (as README and
// the shells write them) with its help and its default.
func printUsage(w io.Writer, fs *flag.FlagSet, synopsis string) {
	fmt.Fprintf(w, "usage: hubscope-helper %s\n\nflags:\n", synopsis)
	fs.VisitAll(func(f *flag.Flag) {
		arg, help := flagArg(f)
		line := "  --" + f.Name
		if arg != "" {
			line += " " + arg
		}
		fmt.Fprintf(w, "%s\n    \t%s", line, help)
		if d := f.DefValue; d != "" && d != "0" && d != "0s" && d != "false" {
			if strings.ContainsAny(d, " \t") {
				d = strconv.Quote(d)
			}
			fmt.Fprintf(w, " (default %s)", d)
		}
		fmt.Fprintln(w)
	})
}

// flagArg is a flag's argument name and its help text: the back-quoted word of its help (the
// flag package's convention), else the settings table's name (settings.FlagArg); switches
// take none. A flag with neither gets VALUE, which TestHelp refuses.
func flagArg(f *flag.Flag) (arg, help string) {
	if b, ok := f.Value.(interface{ IsBoolFlag() bool }); ok && b.IsBoolFlag() {
		return "", f.Usage
	}
	if strings.Contains(f.Usage, "`") {
		return flag.UnquoteUsage(f)
	}
	if arg = settings.FlagArg(f.Name); arg != "" {
		return arg, f.Usage
	}
	return "VALUE", f.Usage
}

// settingUsage reports a settings problem in the command line's words (the flag, not the
// JSON key) and returns errUsage.
func settingUsage(stderr io.Writer, cmd string, err error) error {
	var se *settings.SettingError
	if !errors.As(err, &se) {
		return err
	}
	name := se.Key
	if se.Flag != "" {
		name = "--" + se.Flag
	}
	fmt.Fprintf(stderr, "%s: %s: %s\n", cmd, name, se.Problem)
	return errUsage
}

// parse parses flags and positional arguments interleaved (flags may follow the scan path).
func parse(fs *flagSet, args []string) ([]string, error) {
	var pos []string
	for {
		usage := fs.Usage
		fs.Usage = func() {} // the flag package's own call; the help is printed below
		err := fs.Parse(args)
		fs.Usage = usage
		if err != nil {
			if errors.Is(err, flag.ErrHelp) {
				printUsage(fs.stdout, fs.FlagSet, fs.synopsis)
				return nil, err
			}
			fs.Usage()
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
