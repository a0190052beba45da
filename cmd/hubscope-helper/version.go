package main

import (
	"context"
	"fmt"
	"io"
	"runtime"

	"github.com/hubscope/hubscope/helper/bundle"
	"github.com/hubscope/hubscope/helper/pipeline"
	"github.com/hubscope/hubscope/ipc/schema"
)

func cmdVersion(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := newFlags("version", "version", stdout, stderr)
	if _, err := parse(fs, args); err != nil {
		return err
	}
	h := bundle.ThisHost()
	fmt.Fprintf(stdout, "hubscope-helper %s (%s %s/%s)\n", schema.Version, runtime.Version(), runtime.GOOS, runtime.GOARCH)
	fmt.Fprintf(stdout, "cpu: %s, %d logical CPUs\n", orUnknown(h.CPUModel), h.CPUs)
	fmt.Fprintln(stdout, pipeline.DeviceSummary())
	return nil
}

func orUnknown(s string) string {
	if s == "" {
		return "unknown model"
	}
	return s
}
