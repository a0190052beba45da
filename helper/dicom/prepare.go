package dicom

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"

	"github.com/hubscope/hubscope/helper/scratch"
)

// Prepared is a DICOM input listed, its series chosen and converted, in a private temporary
// folder that Remove deletes.
type Prepared struct {
	*Conversion
	Source  string // the folder, .zip or DICOMDIR as given
	Kind    string // "folder", "zip", "DICOMDIR" or "file"
	Files   int    // files looked at
	Listing *Listing
	Reason  string // why this series: the rule, or "chosen with --series"
	dir     string
}

// Remove deletes the temporary folder (the converted files with it).
func (p *Prepared) Remove() {
	if p != nil && p.dir != "" {
		os.RemoveAll(p.dir)
		p.dir = ""
	}
}

// Redact returns s with every identity value the series' files hold replaced (a folder
// named after the patient, say), for what HubScope writes or logs about the input.
func (p *Prepared) Redact(s string) string { return redact(s, identityValues(p.Series)) }

// Options steer Prepare.
type Options struct {
	Series     int          // 0: pick the BOLD series by the rule (Listing.Pick)
	MinVolumes int          // fewer converted volumes are refused ("a network needs at least N")
	MinWhy     string       // said after N: why this many (e.g. the cleaning's confounds)
	Note       func(string) // progress notes and dcm2niix's warnings, in words (may be nil)
	TempDir    string       // parent of the private temporary folder ("" = the system's)
}

// Prepare lists a DICOM input, picks its series and converts it with dcm2niix. Every
// problem is one error naming the input and the problem; on error nothing is left behind.
func Prepare(ctx context.Context, path string, opt Options) (p *Prepared, err error) {
	note := opt.Note
	if note == nil {
		note = func(string) {}
	}
	dir, err := scratch.MkdirTemp(opt.TempDir, "dicom")
	if err != nil {
		return nil, fmt.Errorf("%s: temporary folder for the conversion: %w", path, err)
	}
	defer func() {
		if err != nil {
			os.RemoveAll(dir)
		}
	}()
	src, err := Open(path, dir)
	if err != nil {
		return nil, err
	}
	defer src.Close() // the extracted .zip; the conversion keeps only its outputs
	lst, err := List(ctx, src)
	if err != nil {
		return nil, err
	}
	if kind := namedLikeFile(path); src.Kind == "folder" && kind != "" {
		note(fmt.Sprintf("%s is a folder named like a %s file; it holds DICOM images, so it is read as a DICOM series folder", path, kind))
	}
	defer func() { // no message names the patient (a folder called after them, say)
		if err != nil && ctx.Err() == nil {
			if msg := lst.Redact(err.Error()); msg != err.Error() {
				err = errors.New(msg)
			}
		}
	}()
	tool, toolErr := FindTool(ctx)
	if toolErr == nil && tool.Guesses() && opt.Series == 0 {
		for _, s := range lst.Series {
			if s.TimeSeries() {
				guess(ctx, tool, s, dir)
			}
		}
	}
	s, reason, err := lst.Pick(opt.Series)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	if s.Problem != "" {
		return nil, fmt.Errorf("%s: %s: %s", path, s.Name(), s.Problem)
	}
	if toolErr != nil {
		return nil, toolErr
	}
	note(fmt.Sprintf("DICOM %s: %d series; converting %s, %s, with dcm2niix %s", src.Kind, len(lst.Series), s.Name(), reason, tool.Version))
	out := filepath.Join(dir, "converted")
	if err := os.Mkdir(out, 0o700); err != nil {
		return nil, err
	}
	c, err := tool.Convert(ctx, s, out)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	for _, w := range c.Warnings {
		note("dcm2niix: " + w)
	}
	if opt.MinVolumes > 0 && c.Volumes < opt.MinVolumes {
		return nil, fmt.Errorf("%s: %s: %s; a network needs at least %d%s", path, s.Name(), plural(c.Volumes, "volume"), opt.MinVolumes, opt.MinWhy)
	}
	return &Prepared{Conversion: c, Source: path, Kind: src.Kind, Files: len(src.Files), Listing: lst, Reason: reason, dir: dir}, nil
}

// guess asks dcm2niix for its BidsGuess of a series (a header-only pass, -b o).
func guess(ctx context.Context, t *Tool, s *Series, dir string) {
	g, err := os.MkdirTemp(dir, "guess-")
	if err != nil {
		return
	}
	defer os.RemoveAll(g)
	c, err := t.convert(ctx, s, g, true)
	if err == nil && c != nil {
		s.BidsGuess = c.guess
	}
}

// TR is the repetition time to analyse with: the NIfTI header's, unless it is missing or
// implausible (outside 0.05–30 s, e.g. a unit mix-up) and the sidecar's RepetitionTime is
// not; then the sidecar's. used says which.
func (c *Conversion) UseTR() (tr float64, used string) {
	ok := func(t float64) bool { return t >= 0.05 && t <= 30 }
	switch {
	case ok(c.HeaderTR):
		return c.HeaderTR, "NIfTI header"
	case ok(c.TR):
		return c.TR, "BIDS sidecar RepetitionTime (the NIfTI header's " + strconv.FormatFloat(c.HeaderTR, 'g', 6, 64) + " s is not plausible)"
	}
	return 0, "unknown"
}

// plural is "1 volume", "2 volumes".
func plural(n int, noun string) string {
	if n == 1 {
		return "1 " + noun
	}
	return strconv.Itoa(n) + " " + noun + "s"
}
