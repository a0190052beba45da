package settings

// Output is how the results bundle names what it holds.
type Output struct {
	// BIDSNames adds BIDS-derivatives names to the bundle (docs/bundle.md, "BIDS names"):
	// dataset_description.json and, under sub-<label>/[ses-<label>/]func/, each nodal map and
	// the network named with the input's entities, each with a JSON sidecar. The input must
	// have a BIDS name.
	BIDSNames bool `json:"bids_names,omitempty"`
}

func (g *Output) fields() []Field {
	return []Field{{"bids_names", "bids-names", "", "also name the maps and the network as BIDS derivatives from the input's entities (sub-01_task-rest_desc-degree_map.nii.gz, …_relmat.npz, JSON sidecars, dataset_description.json); the scan must have a BIDS name", &g.BIDSNames}}
}

func (g *Output) defaults() {}

func (g *Output) validate(s *Settings) error { return nil }
