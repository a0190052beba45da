package ipc

import (
	"fmt"
	"strconv"
	"strings"
	"unicode/utf8"
)

// maxNameBytes bounds job IDs, volume names, upload names and bundle file names (the longest
// file name most file systems accept is 255 bytes; a bundle path has a few segments).
const maxNameBytes = 1024

// checkText refuses names that cannot be shown or stored safely: empty, too long, not UTF-8,
// or holding control characters (NUL, newlines that would forge log lines, …).
func checkText(kind, s string) error {
	if s == "" {
		return fmt.Errorf("%s is empty", kind)
	}
	if len(s) > maxNameBytes {
		return fmt.Errorf("%s is %d bytes long (limit %d)", kind, len(s), maxNameBytes)
	}
	if !utf8.ValidString(s) {
		return fmt.Errorf("%s is not valid UTF-8", kind)
	}
	for _, r := range s {
		if r < 0x20 || r == 0x7f {
			return fmt.Errorf("%s holds a control character (%U)", kind, r)
		}
	}
	return nil
}

// ValidSegment checks a name that must be a single path segment: a job ID, a volume name or
// an upload's file name. It refuses separators ('/', '\\'), "." and "..", so the name can be
// joined to a directory without leaving it.
func ValidSegment(kind, s string) error {
	if err := checkText(kind, s); err != nil {
		return err
	}
	if strings.ContainsAny(s, `/\`) {
		return fmt.Errorf("%s %q holds a path separator", kind, s)
	}
	if s == "." || s == ".." {
		return fmt.Errorf("%s %q is not a name", kind, s)
	}
	return nil
}

// ValidBundleName checks the name of a file inside a results bundle as GET …/files/{name}
// receives it: relative, slash-separated, with no empty, "." or ".." segment, no backslash and
// no control character. The daemon must still confine the joined path to the bundle (symbolic
// links); this check stops traversal before the Service is called.
func ValidBundleName(name string) error {
	if err := checkText("bundle file name", name); err != nil {
		return err
	}
	if strings.HasPrefix(name, "/") {
		return fmt.Errorf("bundle file name %q is absolute", name)
	}
	if strings.Contains(name, `\`) {
		return fmt.Errorf("bundle file name %q holds a backslash", name)
	}
	for _, seg := range strings.Split(name, "/") {
		switch seg {
		case "":
			return fmt.Errorf("bundle file name %q has an empty segment", name)
		case ".", "..":
			return fmt.Errorf("bundle file name %q has a %q segment", name, seg)
		}
	}
	return nil
}

// ParseVoxel parses grid indices written "i,j,k" (as the seed and series endpoints take
// them). Indices must be non-negative; the Service checks them against the grid.
func ParseVoxel(s string) ([3]int, error) {
	var v [3]int
	parts := strings.Split(s, ",")
	if len(parts) != 3 {
		return v, fmt.Errorf("voxel %q: want three grid indices i,j,k", s)
	}
	for a, p := range parts {
		n, err := strconv.Atoi(strings.TrimSpace(p))
		if err != nil || n < 0 {
			return v, fmt.Errorf("voxel %q: index %d is not a non-negative integer", s, a)
		}
		v[a] = n
	}
	return v, nil
}

// FormatVoxel writes grid indices the way ParseVoxel reads them.
func FormatVoxel(v [3]int) string {
	return strconv.Itoa(v[0]) + "," + strconv.Itoa(v[1]) + "," + strconv.Itoa(v[2])
}
