package main

import (
	"context"
	"fmt"
	"io"
	"os"

	"github.com/hubscope/hubscope/helper/dicom"
	"github.com/hubscope/hubscope/helper/scratch"
)

// cmdSeries lists a DICOM input's series and says which one run would analyse (and why),
// without converting anything (docs/dicom.md).
func cmdSeries(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := newFlags("series", "series DICOM_FOLDER|ZIP|DICOMDIR [--series N]", stdout, stderr)
	number := fs.Int("series", 0, "say whether this series number `N` would be taken")
	pos, err := parse(fs, args)
	if err != nil {
		return err
	}
	if len(pos) != 1 {
		fmt.Fprintln(stderr, "series: give exactly one DICOM folder, .zip or DICOMDIR")
		fs.Usage()
		return errUsage
	}
	tmp, err := scratch.MkdirTemp("", "series")
	if err != nil {
		return err
	}
	defer os.RemoveAll(tmp)
	src, err := dicom.Open(pos[0], tmp)
	if err != nil {
		return err
	}
	defer src.Close()
	lst, err := dicom.List(ctx, src)
	if err != nil {
		return err
	}
	fmt.Fprintln(stdout, lst.Table())
	if lst.Skipped > 0 {
		fmt.Fprintf(stdout, "(%d file(s) that hold no DICOM image skipped)\n", lst.Skipped)
	}
	s, reason, err := lst.Pick(*number)
	if err != nil {
		return err
	}
	if s.Problem != "" {
		return fmt.Errorf("%s: %s", s.Name(), s.Problem)
	}
	fmt.Fprintf(stdout, "run would analyse %s: %s\n", s.Name(), reason)
	return nil
}
