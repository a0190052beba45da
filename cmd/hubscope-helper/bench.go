package main

import (
	"context"
	"fmt"
	"io"
)

func cmdBench(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	return fmt.Errorf("bench: unfinished")
}
