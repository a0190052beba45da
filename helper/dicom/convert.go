package dicom

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"sort"
	"strings"

	"github.com/hubscope/hubscope/helper/nifti"
)

// ToolName is the converter HubScope runs.
const ToolName = "dcm2niix"

// InstallHint is the one line shown when dcm2niix cannot be found.
const InstallHint = "dcm2niix is needed to read DICOM and was not found on PATH or beside hubscope-helper; " +
	"install it (Debian/Ubuntu: sudo apt-get install dcm2niix; macOS: brew install dcm2niix; " +
	"conda: conda install -c conda-forge dcm2niix) or convert the scan to NIfTI first"

// ErrNoTool is returned by FindTool when dcm2niix is not installed.
var ErrNoTool = errors.New(InstallHint)

// Tool is the dcm2niix found on this machine.
type Tool struct {
	Path    string `json:"path"`
	Version string `json:"version"` // e.g. "v1.0.20220720"
}

// FindTool looks for dcm2niix beside the running program first (a packaged app ships it
// there) and then on PATH, and asks it for its version.
func FindTool(ctx context.Context) (*Tool, error) {
	dir := ""
	if exe, err := os.Executable(); err == nil {
		dir = filepath.Dir(exe)
	}
	return findTool(ctx, dir)
}

// findTool looks in dir (the program's folder) first, then on PATH.
func findTool(ctx context.Context, dir string) (*Tool, error) {
	var path string
	if dir != "" {
		p := filepath.Join(dir, ToolName)
		if fi, err := os.Stat(p); err == nil && fi.Mode().IsRegular() && fi.Mode()&0o111 != 0 {
			path = p
		}
	}
	if path == "" {
		p, err := exec.LookPath(ToolName)
		if err != nil {
			return nil, ErrNoTool
		}
		path = p
	}
	out, _ := exec.CommandContext(ctx, path, "--version").CombinedOutput() // exits 3 after printing it
	v := versionRE.FindString(string(out))
	if v == "" {
		return nil, fmt.Errorf("%s does not run (%s); reinstall it", path, firstLine(string(out)))
	}
	return &Tool{Path: path, Version: v}, nil
}

var versionRE = regexp.MustCompile(`v\d+\.\d+\.\d+[A-Za-z0-9.]*`)

// BidsGuessSince is the first dcm2niix release whose sidecars carry BidsGuess.
const BidsGuessSince = "v1.0.20230411"

// Guesses reports whether this dcm2niix writes BidsGuess (its versions are v1.0.YYYYMMDD,
// which compare as strings).
func (t *Tool) Guesses() bool {
	return len(t.Version) == len(BidsGuessSince) && t.Version >= BidsGuessSince
}

// Conversion is one series converted: the NIfTI and its anonymised BIDS sidecar in dir.
type Conversion struct {
	Series      *Series
	NIfTI       string    // dir/series_N.nii
	Sidecar     string    // dir/series_N.json
	Volumes     int       // from the NIfTI header
	TR          float64   // seconds: the sidecar's RepetitionTime (0 when it has none)
	HeaderTR    float64   // seconds: the NIfTI header's pixdim[4] (0 when unset)
	SliceTiming []float64 // the sidecar's SliceTiming (seconds), kept as it is
	Warnings    []string  // dcm2niix's warnings, in words, without paths
	Removed     []string  // identity keys taken out of the sidecar
	Tool        Tool

	guess []string
}

// Convert converts one series with dcm2niix into dir (which must exist; it holds nothing
// else afterwards but the NIfTI and the sidecar). The series' files are linked (or copied)
// under neutral names into a private staging folder inside dir first, so that dcm2niix sees
// only this series and its messages name no file of the user's; the folder is removed.
func (t *Tool) Convert(ctx context.Context, s *Series, dir string) (*Conversion, error) {
	return t.convert(ctx, s, dir, false)
}

// convert runs dcm2niix; with guessOnly it writes the sidecar alone (-b o, no image) and
// returns just its BidsGuess.
func (t *Tool) convert(ctx context.Context, s *Series, dir string, guessOnly bool) (*Conversion, error) {
	stage, err := os.MkdirTemp(dir, ".stage-")
	if err != nil {
		return nil, err
	}
	defer os.RemoveAll(stage)
	in, out := filepath.Join(stage, "in"), filepath.Join(stage, "out")
	if err := os.Mkdir(in, 0o700); err != nil {
		return nil, err
	}
	if err := os.Mkdir(out, 0o700); err != nil {
		return nil, err
	}
	for i, f := range s.Files {
		if err := linkOrCopy(f, filepath.Join(in, fmt.Sprintf("%06d.dcm", i+1))); err != nil {
			return nil, fmt.Errorf("%s: stage for conversion: %w", f, unwrap(err))
		}
	}
	base := fmt.Sprintf("series_%d", s.Number)
	// -b y -ba y: BIDS sidecar, anonymised; -z n: plain .nii (the reference conversions are
	// plain, and dcm2niix's own gzip depends on whether pigz is installed); -d 0: this folder
	// only; -f: a neutral name (the default names the folder and protocol).
	sidecar := "y"
	if guessOnly {
		sidecar = "o"
	}
	cmd := exec.CommandContext(ctx, t.Path, "-b", sidecar, "-ba", "y", "-z", "n", "-d", "0", "-f", base, "-o", out, in)
	var log bytes.Buffer
	cmd.Stdout, cmd.Stderr = &log, &log
	runErr := runChild(cmd)
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	msgs := messages(log.String(), stage, s, identityValues(s))
	if runErr != nil {
		return nil, fmt.Errorf("%s: dcm2niix could not convert it: %s", s.Name(), joinOr(msgs.errors, runErr.Error()))
	}
	if guessOnly {
		jsons, _ := filepath.Glob(filepath.Join(out, "*.json"))
		c := &Conversion{}
		if len(jsons) == 1 {
			if raw, err := os.ReadFile(jsons[0]); err == nil {
				var v struct{ BidsGuess []string }
				if json.Unmarshal(raw, &v) == nil {
					c.guess = v.BidsGuess
				}
			}
		}
		return c, nil
	}
	niis, _ := filepath.Glob(filepath.Join(out, "*.nii"))
	sort.Strings(niis)
	switch {
	case len(niis) == 0:
		return nil, fmt.Errorf("%s: dcm2niix wrote no image: %s", s.Name(), joinOr(append(msgs.errors, msgs.warnings...), "no message"))
	case len(niis) > 1:
		var names []string
		for _, n := range niis {
			names = append(names, strings.TrimSuffix(filepath.Base(n), ".nii"))
		}
		return nil, fmt.Errorf("%s: dcm2niix split it into %d images (%s): the series mixes acquisitions of different kinds; choose another series or export it again", s.Name(), len(niis), strings.Join(names, ", "))
	}
	c := &Conversion{Series: s, NIfTI: filepath.Join(dir, base+".nii"), Sidecar: filepath.Join(dir, base+".json"), Warnings: msgs.warnings, Tool: *t}
	side := strings.TrimSuffix(niis[0], ".nii") + ".json"
	if err := os.Rename(niis[0], c.NIfTI); err != nil {
		return nil, err
	}
	if err := c.anonymise(side); err != nil {
		return nil, err
	}
	r, err := nifti.Open(c.NIfTI)
	if err != nil {
		return nil, fmt.Errorf("%s: dcm2niix's image cannot be read: %w", s.Name(), err)
	}
	c.Volumes, c.HeaderTR = r.Header.Volumes(), r.Header.TR()
	r.Close()
	if err := c.checkPrivacy(); err != nil {
		return nil, err
	}
	return c, nil
}

func linkOrCopy(src, dst string) error {
	if err := os.Link(src, dst); err == nil {
		return nil
	}
	in, err := os.Open(src)
	if err != nil {
		return err
	}
	defer in.Close()
	out, err := os.OpenFile(dst, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
	if err != nil {
		return err
	}
	if _, err := io.Copy(out, in); err != nil {
		out.Close()
		return err
	}
	return out.Close()
}

type dcmMessages struct{ warnings, errors []string }

// messages picks dcm2niix's warnings and errors out of its output, in its words, with the
// staging folder's paths replaced by the series' name and any identity value removed.
func messages(out, stage string, s *Series, identity []string) dcmMessages {
	var m dcmMessages
	sc := bufio.NewScanner(strings.NewReader(out))
	for sc.Scan() {
		line := strings.TrimSpace(sc.Text())
		low := strings.ToLower(line)
		var dst *[]string
		switch {
		case strings.HasPrefix(low, "warning"), strings.HasPrefix(low, "unsupported"), strings.Contains(low, "missing"):
			dst = &m.warnings
		case strings.HasPrefix(low, "error"), strings.Contains(low, "unable to"), strings.Contains(low, "corrupt"):
			dst = &m.errors
		default:
			continue
		}
		line = strings.ReplaceAll(line, stage+string(os.PathSeparator)+"in"+string(os.PathSeparator), "")
		line = strings.ReplaceAll(line, stage, s.Name())
		*dst = append(*dst, redact(line, identity))
	}
	return m
}

func redact(s string, identity []string) string {
	for _, v := range byLength(identity) {
		var b strings.Builder
		rest := s
		for {
			k := wordIndex(rest, v)
			if k < 0 {
				break
			}
			b.WriteString(rest[:k])
			b.WriteString("[identity removed]")
			rest = rest[k+len(v):]
		}
		b.WriteString(rest)
		s = b.String()
	}
	return s
}

// holdsIdentity reports whether text holds any of the identity values (as redact finds them).
func holdsIdentity(text string, identity []string) bool {
	for _, v := range identity {
		if wordIndex(text, v) >= 0 {
			return true
		}
	}
	return false
}

// byLength orders values longest first, so that "Doe^Jane" is removed whole before "Doe".
func byLength(vals []string) []string {
	out := append([]string(nil), vals...)
	sort.SliceStable(out, func(i, j int) bool { return len(out[i]) > len(out[j]) })
	return out
}

// wordIndex finds v in s as a whole word where v begins or ends with a letter or digit (the
// neighbour there must not be one): a patient called Tim is found in "Tim Smith" and in a
// folder "Tim_exam", but not in dcm2niix's "Time=134935.305"; a name part Wei not in
// "Weighted". -1 when absent.
func wordIndex(s, v string) int {
	if v == "" {
		return -1
	}
	alnum := func(b byte) bool { return b >= '0' && b <= '9' || b >= 'A' && b <= 'Z' || b >= 'a' && b <= 'z' }
	for off := 0; off < len(s); {
		k := strings.Index(s[off:], v)
		if k < 0 {
			return -1
		}
		k += off
		end := k + len(v)
		if (!alnum(v[0]) || k == 0 || !alnum(s[k-1])) && (!alnum(v[len(v)-1]) || end == len(s) || !alnum(s[end])) {
			return k
		}
		off = k + 1
	}
	return -1
}

func joinOr(list []string, fallback string) string {
	if len(list) == 0 {
		return fallback
	}
	return strings.Join(list, "; ")
}

func firstLine(s string) string {
	s, _, _ = strings.Cut(strings.TrimSpace(s), "\n")
	return s
}

func identityValues(s *Series) []string {
	var vals []string
	for _, id := range s.identity {
		vals = append(vals, id.Values()...)
	}
	return vals
}

// IdentityKeys are the sidecar keys that identify the patient or the site and are never
// copied: dcm2niix's -ba y drops the patient's name, ID, birth date, sex, weight and the
// acquisition date, but keeps the institution's address; these go whatever the version.
var IdentityKeys = []string{
	"PatientName", "PatientID", "PatientBirthDate", "PatientSex", "PatientWeight", "PatientAge",
	"PatientSize", "InstitutionAddress", "ReferringPhysicianName", "AccessionNumber",
	"AcquisitionDateTime", "AcquisitionDate", "StudyDate", "SeriesDate", "ContentDate",
	"DeviceSerialNumber", "StationName", "StudyInstanceUID", "SeriesInstanceUID",
}

// anonymise rewrites dcm2niix's sidecar at src into c.Sidecar without IdentityKeys, keeping
// every other key in dcm2niix's order and reading RepetitionTime and SliceTiming.
func (c *Conversion) anonymise(src string) error {
	raw, err := os.ReadFile(src)
	if err != nil {
		return fmt.Errorf("%s: dcm2niix wrote no BIDS sidecar: %w", c.Series.Name(), unwrap(err))
	}
	keys, vals, err := orderedObject(raw)
	if err != nil {
		return fmt.Errorf("%s: dcm2niix's sidecar is not JSON: %w", c.Series.Name(), err)
	}
	drop := map[string]bool{}
	for _, k := range IdentityKeys {
		drop[k] = true
	}
	var b bytes.Buffer
	b.WriteString("{\n")
	first := true
	for i, k := range keys {
		if drop[k] {
			c.Removed = append(c.Removed, k)
			continue
		}
		switch k {
		case "RepetitionTime":
			json.Unmarshal(vals[i], &c.TR)
		case "SliceTiming":
			json.Unmarshal(vals[i], &c.SliceTiming)
		}
		if !first {
			b.WriteString(",\n")
		}
		first = false
		var v bytes.Buffer
		if err := json.Compact(&v, vals[i]); err != nil {
			return err
		}
		kb, _ := json.Marshal(k)
		b.WriteString("\t")
		b.Write(kb)
		b.WriteString(": ")
		b.Write(v.Bytes())
	}
	b.WriteString("\n}\n")
	return os.WriteFile(c.Sidecar, b.Bytes(), 0o644)
}

// orderedObject splits a JSON object into its keys and raw values, in order.
func orderedObject(raw []byte) ([]string, []json.RawMessage, error) {
	dec := json.NewDecoder(bytes.NewReader(raw))
	tok, err := dec.Token()
	if err != nil {
		return nil, nil, err
	}
	if d, ok := tok.(json.Delim); !ok || d != '{' {
		return nil, nil, errors.New("not an object")
	}
	var keys []string
	var vals []json.RawMessage
	for dec.More() {
		tok, err := dec.Token()
		if err != nil {
			return nil, nil, err
		}
		k, ok := tok.(string)
		if !ok {
			return nil, nil, errors.New("object key is not a string")
		}
		var v json.RawMessage
		if err := dec.Decode(&v); err != nil {
			return nil, nil, err
		}
		keys, vals = append(keys, k), append(vals, v)
	}
	if _, err := dec.Token(); err != nil {
		return nil, nil, err
	}
	return keys, vals, nil
}

// checkPrivacy is HubScope's own check of what it is about to copy: neither the sidecar nor
// the NIfTI header (with its extensions) may hold any identity value the DICOM files held.
func (c *Conversion) checkPrivacy() error {
	vals := identityValues(c.Series)
	side, err := os.ReadFile(c.Sidecar)
	if err != nil {
		return err
	}
	head, err := readHead(c.NIfTI)
	if err != nil {
		return err
	}
	for _, blob := range [][]byte{side, head} {
		if holdsIdentity(string(blob), vals) {
			return fmt.Errorf("%s: the converted files still hold the patient's or institution's identity; nothing was kept (report this: dcm2niix %s)", c.Series.Name(), c.Tool.Version)
		}
	}
	return nil
}

// readHead reads a .nii's header and extensions (everything before vox_offset).
func readHead(path string) ([]byte, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	r, err := nifti.Open(path)
	if err != nil {
		return nil, err
	}
	off := int64(r.Header.VoxOffset)
	r.Close()
	off = min(max(off, 352), 64<<20)
	buf := make([]byte, off)
	n, _ := io.ReadFull(f, buf)
	return buf[:n], nil
}
