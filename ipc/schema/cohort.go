package schema

import "time"

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
	// Subjects are the runs a group-mean bundle (DERIV/group/) averaged, each with its scan's
	// size and SHA-256 from the run's own marker (Input is the first); nil in a run's marker.
	// A group bundle's Files are relative to DERIV/group.
	Subjects []GroupSubject `json:"subjects,omitempty"`
}

// CohortDigest is a file's size and SHA-256 (hex).
type CohortDigest struct {
	Bytes  int64  `json:"bytes"`
	SHA256 string `json:"sha256"`
}

// SlurmStateFile is the record of a cohort's Slurm submissions (`cohort --slurm`), in the
// derivatives folder's slurm/ folder (DERIV/slurm/state.json): SlurmState.
const SlurmStateFile = "state.json"

// SlurmState is DERIV/slurm/state.json: the BIDS dataset and task the cohort selects, the
// settings its bundles must have been made with (flat JSON keys, as in CohortMarker), and every
// submission so far, so that a later submission sends only the subjects neither complete nor
// still queued or running, and `cohort DERIV --status` can report on each.
type SlurmState struct {
	BIDS        string            `json:"bids"`
	Task        string            `json:"task,omitempty"`
	Settings    map[string]any    `json:"settings"` // what the bundles must have been made with
	Submissions []SlurmSubmission `json:"submissions"`
}

// SlurmSubmission is one sbatch of the job array and its group step: its folder (relative to
// DERIV/slurm), when it was submitted, the array's and the group step's job ids (as sbatch
// printed them; absent where not submitted) and the subject labels of each array task.
type SlurmSubmission struct {
	Dir       string     `json:"dir"` // relative to DERIV/slurm
	Submitted time.Time  `json:"submitted"`
	ArrayJob  string     `json:"array_job,omitempty"`
	GroupJob  string     `json:"group_job,omitempty"`
	Tasks     [][]string `json:"tasks"` // subject labels of each array task
}

// CohortCopySidecar is the JSON sidecar of each stem `cohort` copies from a run's bundle into
// its BIDS func folder (<entities>_desc-<stem>_hubscope.json, beside the copies
// <entities>_desc-<stem>_hubscope.<ext>): what the stem holds, each extension's bundle file,
// the settings of the analysis (flat JSON keys) and the BIDS URI of the source scan. The
// fields are in the order the sidecar was written when it was a map (sorted keys).
type CohortCopySidecar struct {
	Description string            `json:"Description"`
	Files       map[string]string `json:"Files"` // extension (".nii.gz") → the bundle file it copies
	Settings    map[string]any    `json:"Settings"`
	Sources     []string          `json:"Sources"` // "bids::sub-01/func/sub-01_task-rest_bold.nii.gz"
}

// CohortTableSidecar is measures.json, the sidecar of the derivatives folder's subjects ×
// measures table (measures.tsv): for the run column and every measure column (metrics.json's
// keys, e.g. "network.edges", and with an atlas "region_<map>.<label>"), its description
// (BIDS: a tabular file's JSON sidecar describes its columns). participants.tsv's columns,
// which the table repeats, are not described here.
type CohortTableSidecar map[string]CohortColumn

// CohortColumn describes one column of a tabular file.
type CohortColumn struct {
	Description string `json:"Description"`
}

// CohortGroupSidecar is the JSON sidecar of a task's group-mean bundle in the derivatives
// folder (DERIV/group/task-<label>_desc-groupmean_hubscope.json, beside the bundle
// task-<label>_desc-groupmean_hubscope/): what it holds, the bundle's folder name, the mean
// (fisher-z or r) and mask rule, the settings (flat JSON keys, as in CohortMarker) and the
// BIDS URIs of the runs averaged.
type CohortGroupSidecar struct {
	Description string         `json:"Description"`
	Bundle      string         `json:"Bundle"` // the results bundle's folder, beside the sidecar
	Mean        string         `json:"Mean"`
	MaskRule    string         `json:"MaskRule"`
	Settings    map[string]any `json:"Settings"`
	Sources     []string       `json:"Sources"` // "bids::sub-01/func/sub-01_task-rest_bold.nii.gz", one per run
}
