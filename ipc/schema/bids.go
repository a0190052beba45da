package schema

// DatasetDescriptionFile is a BIDS dataset's description: the derivatives folder of `cohort`
// and, with `run --bids-names`, the bundle (DatasetDescription).
const DatasetDescriptionFile = "dataset_description.json"

// DatasetDescription is dataset_description.json of a derivative dataset (BIDS 1.8, "Derived
// dataset and pipeline description"): its name, the BIDS version, DatasetType "derivative",
// the pipeline that generated it and, for a cohort, the source dataset as a file:// URL. The
// fields are in the order the file was written when it was a map (sorted keys).
type DatasetDescription struct {
	BIDSVersion    string          `json:"BIDSVersion"`
	DatasetType    string          `json:"DatasetType"`
	GeneratedBy    []GeneratedBy   `json:"GeneratedBy"`
	Name           string          `json:"Name"`
	SourceDatasets []SourceDataset `json:"SourceDatasets,omitempty"`
}

// GeneratedBy names a pipeline that generated a derivative dataset.
type GeneratedBy struct {
	Name    string `json:"Name"`
	Version string `json:"Version"`
}

// SourceDataset is a dataset a derivative dataset was made from.
type SourceDataset struct {
	URL string `json:"URL"`
}
