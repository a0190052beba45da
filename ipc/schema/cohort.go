package schema

// CohortMarkerFile is the completion marker `cohort` writes in each run's bundle folder of the
// derivatives (CohortMarker), last, once every file of the bundle and its copies is in place.
const CohortMarkerFile = "cohort_complete.json"

// CohortMarker is cohort_complete.json: what the bundle was made from (the scan's size and
// SHA-256), the settings that decide its content, and every file it holds, so that a rerun
// skips a complete bundle made with the same settings and the group and table steps count
// only bundles whose files still match.
type CohortMarker struct {
	Software string                  `json:"software"`
	Version  string                  `json:"version"`
	Input    Input                   `json:"input"`
	Settings map[string]any          `json:"settings"`
	Files    map[string]CohortDigest `json:"files"` // relative to the run's func folder
}

// CohortDigest is a file's size and SHA-256 (hex).
type CohortDigest struct {
	Bytes  int64  `json:"bytes"`
	SHA256 string `json:"sha256"`
}
