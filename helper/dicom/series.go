package dicom

import (
	"context"
	"errors"
	"fmt"
	"os"
	"sort"
	"strconv"
	"strings"
)

// Series is one series of a DICOM input, as the listing shows it.
type Series struct {
	Number      int      `json:"number"`
	Description string   `json:"description"`
	Modality    string   `json:"modality"`
	ImageType   []string `json:"image_type"`
	Volumes     int      `json:"volumes"`
	Slices      int      `json:"slices"`
	Matrix      [3]int   `json:"matrix"` // columns, rows, slices of one volume
	TR          float64  `json:"tr"`     // seconds; 0 when absent
	EPI         bool     `json:"epi"`    // echo-planar (ScanningSequence EP or an "ep" sequence name)
	Files       []string `json:"-"`
	// BidsGuess is dcm2niix's guess of the series' BIDS name (e.g. "func", "_bold"), where
	// the installed dcm2niix makes one; empty otherwise.
	BidsGuess []string `json:"bids_guess,omitempty"`
	// Problem says why the series cannot be converted whole (missing volumes or slices,
	// mixed matrices); empty when it can.
	Problem string `json:"problem,omitempty"`

	uid      string
	study    string
	identity []Identity
	derived  bool
	diffuse  bool
}

// Name is the series as the user sees it: "series 6 \"ax_asc_35sl\"".
func (s *Series) Name() string {
	d := s.Description
	if d == "" {
		d = "no description"
	}
	return fmt.Sprintf("series %d %q", s.Number, d)
}

// Line is the series on one line of a listing.
func (s *Series) Line() string {
	m := fmt.Sprintf("%d×%d×%d", s.Matrix[0], s.Matrix[1], s.Matrix[2])
	tr := "unknown"
	if s.TR > 0 {
		tr = strconv.FormatFloat(s.TR, 'g', 6, 64) + " s"
	}
	line := fmt.Sprintf("%6d  %-24s %-4s %-30s %7d  %-9s %s", s.Number, quote(s.Description), s.Modality,
		strings.Join(s.ImageType, `\`), s.Volumes, tr, m)
	if s.Problem != "" {
		line += "  (" + s.Problem + ")"
	}
	return strings.TrimRight(line, " ")
}

func quote(s string) string {
	if s == "" {
		return "(no description)"
	}
	return s
}

// TimeSeries reports whether the series is a functional time series candidate: EPI, more
// than one volume, acquired (not derived, e.g. motion-corrected), not diffusion-weighted.
func (s *Series) TimeSeries() bool {
	return s.EPI && s.Volumes > 1 && !s.derived && !s.diffuse
}

// Redact returns str with every identity value the series' files hold replaced.
func (s *Series) Redact(str string) string { return redact(str, identityValues(s)) }

// Identities are the patient identities the series' files hold (to check the conversion).
func (s *Series) Identities() []Identity { return s.identity }

// Listing is everything a DICOM input holds.
type Listing struct {
	Series  []*Series
	Skipped int // files that are not DICOM (notes, thumbnails, DICOMDIR)
	Studies int
}

// List reads the headers of a source's files and groups them into series, in series-number
// order. A file that claims to be DICOM but cannot be read stops the listing with its name.
func List(ctx context.Context, src *Source) (*Listing, error) {
	bySeries := map[string]*Series{}
	var heads = map[*Series][]*Header{}
	studies := map[string]bool{}
	lst := &Listing{}
	for _, path := range src.Files {
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		h, err := readFile(path)
		if errors.Is(err, ErrNotDICOM) {
			lst.Skipped++
			continue
		}
		if err != nil {
			return nil, fmt.Errorf("%s: %w", display(src, path), err)
		}
		if h.SOPClass == dicomdirSOPClass || !h.HasPixels {
			lst.Skipped++
			continue
		}
		key := h.SeriesUID
		if key == "" {
			key = fmt.Sprintf("%d/%s", h.SeriesNumber, h.Description)
		}
		s := bySeries[key]
		if s == nil {
			s = &Series{Number: h.SeriesNumber, Description: h.Description, Modality: h.Modality, ImageType: h.ImageType,
				TR: h.TR / 1000, uid: key, study: h.StudyUID}
			if s.Description == "" {
				s.Description = h.Protocol
			}
			bySeries[key] = s
		}
		studies[h.StudyUID] = true
		h.path = path
		heads[s] = append(heads[s], h)
	}
	for s, hs := range heads {
		summarise(s, hs)
		lst.Series = append(lst.Series, s)
	}
	sort.Slice(lst.Series, func(i, j int) bool {
		a, b := lst.Series[i], lst.Series[j]
		if a.Number != b.Number {
			return a.Number < b.Number
		}
		return a.uid < b.uid
	})
	lst.Studies = len(studies)
	if len(lst.Series) == 0 {
		if src.Kind == "folder" && namedLikeFile(src.Path) != "" {
			return lst, fmt.Errorf("%s: a folder, not a %s file; taken for a DICOM folder, it holds no DICOM images (%d file(s) looked at)", src.Path, namedLikeFile(src.Path), len(src.Files))
		}
		return lst, fmt.Errorf("%s: no DICOM images found (%d file(s) looked at)", src.Path, len(src.Files))
	}
	return lst, nil
}

func display(src *Source, path string) string {
	if src.Kind == "zip" && src.tmp != "" {
		if rel, ok := strings.CutPrefix(path, src.tmp+string(os.PathSeparator)); ok {
			return src.Path + ": " + rel
		}
	}
	return path
}

func readFile(path string) (*Header, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, unwrap(err)
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return nil, unwrap(err)
	}
	return ReadHeader(f, fi.Size())
}

// summarise counts a series' volumes and slices and looks for missing ones.
func summarise(s *Series, hs []*Header) {
	sort.SliceStable(hs, func(i, j int) bool { return hs[i].Instance < hs[j].Instance })
	s.Files = s.Files[:0]
	for _, h := range hs {
		s.Files = append(s.Files, h.path)
	}
	h0 := hs[0]
	seq := strings.ToUpper(h0.ScanningSeq)
	name := strings.ToLower(h0.SequenceName)
	s.EPI = strings.Contains(seq, "EP") || strings.Contains(name, "ep")
	s.diffuse = strings.Contains(name, "ep_b") || hasAny(h0.ImageType, "DIFFUSION", "ADC", "TRACEW", "FA")
	s.derived = len(h0.ImageType) > 0 && strings.EqualFold(h0.ImageType[0], "DERIVED") || hasAny(h0.ImageType, "MOCO")
	ids := map[Identity]bool{}
	sizes := map[[2]int]bool{}
	for _, h := range hs {
		if !ids[h.Identity] {
			ids[h.Identity] = true
			s.identity = append(s.identity, h.Identity)
		}
		sizes[[2]int{h.Columns, h.Rows}] = true
	}
	if len(sizes) > 1 {
		s.Problem = fmt.Sprintf("its images have %d different matrices", len(sizes))
	}
	switch {
	case h0.Mosaic > 1 || hasAny(h0.ImageType, "MOSAIC"):
		// Siemens mosaic: one file per volume, the slices tiled in a square grid.
		s.Volumes, s.Slices = len(hs), max(h0.Mosaic, 1)
		tiles := 1
		for tiles*tiles < s.Slices {
			tiles++
		}
		s.Matrix = [3]int{h0.Columns / tiles, h0.Rows / tiles, s.Slices}
		if s.Problem == "" {
			s.Problem = missingInstances(hs, "volume")
		}
	case h0.Frames > 1:
		// Multi-frame: one file holds every slice and volume.
		frames := 0
		for _, h := range hs {
			frames += h.Frames
		}
		s.Volumes = max(h0.TemporalPos, 1)
		s.Slices = frames / s.Volumes
		s.Matrix = [3]int{h0.Columns, h0.Rows, s.Slices}
		if frames%s.Volumes != 0 && s.Problem == "" {
			s.Problem = fmt.Sprintf("%d frames do not divide into %d volumes: slices missing", frames, s.Volumes)
		}
	default:
		// One slice a file: as many volumes as images at each slice position.
		per := map[string]int{}
		for _, h := range hs {
			per[h.Position]++
		}
		lo, hi := len(hs), 0
		for _, n := range per {
			lo, hi = min(lo, n), max(hi, n)
		}
		s.Slices, s.Volumes = len(per), hi
		s.Matrix = [3]int{h0.Columns, h0.Rows, s.Slices}
		if lo != hi && s.Problem == "" {
			s.Problem = fmt.Sprintf("slice positions hold between %d and %d images: %s missing", lo, hi, plural(hi*len(per)-len(hs), "image"))
		}
		if lo == hi && s.Problem == "" && s.Volumes > 1 {
			s.Problem = missingInstances(hs, "image")
		}
	}
}

// missingInstances finds gaps in the instance numbers (a volume or image lost on the way
// from the scanner) and duplicates (two acquisitions mixed under one series).
func missingInstances(hs []*Header, what string) string {
	seen := map[int]bool{}
	lo, hi := hs[0].Instance, hs[0].Instance
	for _, h := range hs {
		if seen[h.Instance] {
			return fmt.Sprintf("instance number %d appears twice: two acquisitions mixed in one series", h.Instance)
		}
		seen[h.Instance] = true
		lo, hi = min(lo, h.Instance), max(hi, h.Instance)
	}
	if hi-lo+1 == len(hs) {
		return ""
	}
	var gone []string
	for i := lo; i <= hi && len(gone) < 5; i++ {
		if !seen[i] {
			gone = append(gone, strconv.Itoa(i))
		}
	}
	return fmt.Sprintf("%s missing: instance numbers %d–%d lack %s", plural(hi-lo+1-len(hs), what), lo, hi, strings.Join(gone, ", "))
}

func hasAny(list []string, want ...string) bool {
	for _, v := range list {
		for _, w := range want {
			if strings.EqualFold(v, w) {
				return true
			}
		}
	}
	return false
}

// Pick chooses the series to convert. With number > 0 it is that series. Otherwise it is
// the BOLD time series by this rule (docs/dicom.md): among the EPI time series (more than
// one volume, acquired rather than derived, not diffusion) — narrowed to those dcm2niix's
// BidsGuess calls func/…_bold where it guesses — the one with the most volumes. A tie is
// refused as mixed series (the user picks with --series). reason says why, in words.
func (l *Listing) Pick(number int) (s *Series, reason string, err error) {
	if l.Studies > 1 && number == 0 {
		return nil, "", fmt.Errorf("the input mixes %d studies (possibly different patients); give one study's folder, or choose a series with --series N: %s", l.Studies, l.Brief())
	}
	if number > 0 {
		var hits []*Series
		for _, c := range l.Series {
			if c.Number == number {
				hits = append(hits, c)
			}
		}
		switch len(hits) {
		case 0:
			return nil, "", fmt.Errorf("no series %d here; the series are %s", number, l.Brief())
		case 1:
			return hits[0], "chosen with --series", nil
		default:
			return nil, "", fmt.Errorf("%d series are numbered %d (different studies mixed); give one study's folder: %s", len(hits), number, l.Brief())
		}
	}
	var cands []*Series
	for _, c := range l.Series {
		if c.TimeSeries() {
			cands = append(cands, c)
		}
	}
	if len(cands) == 0 {
		return nil, "", fmt.Errorf("no functional time series here (no EPI series with more than one volume), only %s", l.Brief())
	}
	rule := "the EPI time series with the most volumes"
	var bold []*Series
	for _, c := range cands {
		if len(c.BidsGuess) >= 2 && c.BidsGuess[0] == "func" && strings.HasSuffix(c.BidsGuess[1], "_bold") {
			bold = append(bold, c)
		}
	}
	if len(bold) > 0 {
		cands, rule = bold, "the EPI time series dcm2niix's BidsGuess calls func/bold with the most volumes"
	}
	sort.SliceStable(cands, func(i, j int) bool { return cands[i].Volumes > cands[j].Volumes })
	if len(cands) > 1 && cands[1].Volumes == cands[0].Volumes {
		var tied []string
		for _, c := range cands {
			if c.Volumes == cands[0].Volumes {
				tied = append(tied, strconv.Itoa(c.Number))
			}
		}
		return nil, "", fmt.Errorf("mixed series: %d EPI time series have %d volumes each (series %s); choose one with --series N (here: %s)",
			len(tied), cands[0].Volumes, strings.Join(tied, ", "), l.Brief())
	}
	return cands[0], fmt.Sprintf("%s (%d)", rule, cands[0].Volumes), nil
}

// Redact returns str with every identity value the listed files hold replaced.
func (l *Listing) Redact(str string) string {
	var vals []string
	for _, s := range l.Series {
		vals = append(vals, identityValues(s)...)
	}
	return redact(str, vals)
}

// Brief is the listing on one line: `series 6 "ax_asc_35sl" (EPI, 2 volumes), series 2 "t1" (1 volume)`.
func (l *Listing) Brief() string {
	var parts []string
	for _, s := range l.Series {
		kind := ""
		if s.EPI {
			kind = "EPI, "
		}
		parts = append(parts, fmt.Sprintf("series %d %q (%s%s)", s.Number, s.Description, kind, plural(s.Volumes, "volume")))
	}
	return strings.Join(parts, ", ")
}

// Table is the listing, one series a line, under a header line.
func (l *Listing) Table() string {
	var b strings.Builder
	b.WriteString(fmt.Sprintf("%6s  %-24s %-4s %-30s %7s  %-9s %s", "series", "description", "mod", "image type", "volumes", "TR", "matrix"))
	for _, s := range l.Series {
		b.WriteString("\n" + s.Line())
	}
	return b.String()
}
