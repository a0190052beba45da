package main

import (
	"context"
	"fmt"
	"io"
)

// cmdServe will run the IPC daemon (the helper-daemon issue); until then it says so plainly.
func cmdServe(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := newFlags("serve", "serve", stderr)
	if _, err := parse(fs, args); err != nil {
		return err
	}
	return fmt.Errorf("not yet: the IPC daemon arrives with the helper-daemon issue; use \"hubscope-helper run\" meanwhile")
}
