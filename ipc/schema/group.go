package schema

// GroupFile is a group-mean network's record of its subjects in the bundle (Group).
const GroupFile = "group.json"

// Group is group.json (run --group): who was averaged, how, and what the mask rule did.
type Group struct {
	Mean      string         `json:"mean"` // fisher-z or r
	MaskRule  string         `json:"mask_rule"`
	Subjects  []GroupSubject `json:"subjects"`
	Nodes     int            `json:"nodes"`
	Volumes   int            `json:"volumes_per_subject"`
	MaskNotes []string       `json:"mask_notes"`
}

// GroupSubject is one subject's scan: its label, path, size and SHA-256.
type GroupSubject struct {
	Label  string `json:"label"`
	Path   string `json:"path"`
	Bytes  int64  `json:"bytes,omitempty"`
	SHA256 string `json:"sha256,omitempty"`
}
