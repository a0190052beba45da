package schema

// NetworkSidecarFile describes network.npz in the bundle (NetworkSidecar).
const NetworkSidecarFile = "network.json"

// NetworkSidecar is network.json: which part of the symmetric matrix network.npz holds.
type NetworkSidecar struct {
	Matrix        string `json:"matrix"` // "upper" (strict upper triangle) or "symmetric"
	Shape         [2]int `json:"shape"`
	Edges         int64  `json:"edges"`          // undirected edges
	StoredEntries int64  `json:"stored_entries"` // non-zeros in the file: edges, or twice them
	Note          string `json:"note"`
}
