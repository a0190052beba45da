// Package smoke is the format of the folder that `hubscope --smoke-dump DIR` writes for the
// desktop app's real-window smoke test (scripts/gui-smoke.sh): the JSON files' types, shared
// by the writer (smoke/dump, built into the app behind that flag) and the checker
// (smoke/smokecheck). The smoke tests' drivers live under internal/smoke, apart from the
// product's commands in cmd/.
package smoke

// Layout is layout.json: where the 3D view lies in window.png.
type Layout struct {
	Scale  float32 `json:"scale"` // pixels per Fyne unit
	View3D Rect    `json:"view3d"`
	// LinkFiles says whether the bundle has a connectome to draw (hub_links.tsv, or a region
	// network's network.edge); Links is how many links the 3D view draws.
	LinkFiles bool `json:"link_files"`
	Links     int  `json:"links"`
}

// Rect is an object's place in the window, in pixels.
type Rect struct{ X, Y, W, H int }

// SlicesLayout is slices-layout.json: where the slice viewer lies in the window once the
// Slices tab is shown.
type SlicesLayout struct {
	Slices Rect `json:"slices"`
}

// SlicesInfo is slices.json: what slices.png shows at the crosshair.
type SlicesInfo struct {
	Crosshair [3]int  `json:"crosshair"`
	Overlay   string  `json:"overlay"`
	Opacity   float64 `json:"opacity"`
	// Module of the hub at the crosshair (0: the crosshair is on no hub).
	Module int `json:"module"`
}

// TabInfo is <tab>.json, written once a result's Quality, Norm or Sweep tab is shown (the
// script asks with show-<tab>): the tab's place in the window and what it shows.
type TabInfo struct {
	Tab   string `json:"tab"`
	Place Rect   `json:"place"`
	// Quality: whether the FD trace is shown, and the DVARS trace's points.
	FDShown     bool `json:"fd_shown,omitempty"`
	DVARSPoints int  `json:"dvars_points,omitempty"`
	// Norm: the table's rows as shown; T-maps: the significant nodes (Kind "significant", Z
	// their t) and the |t| the slices show from (Cut).
	Rows []NormRow `json:"rows,omitempty"`
	Cut  float64   `json:"cut,omitempty"`
	// Sweep: each curve drawn and its points.
	Curves map[string]int `json:"curves,omitempty"`
}

// NormRow is one row of the Norm tab's table.
type NormRow struct {
	Kind  string  `json:"kind"`
	Voxel [3]int  `json:"voxel"`
	Z     float64 `json:"z"`
}

// GroupInfo is group.json, written with the dump of a group-mean network's result: the Network
// tab's place (shown once the dump is written) and its group lines as the app shows them.
type GroupInfo struct {
	Title string   `json:"title"`
	Place Rect     `json:"place"`
	Lines []string `json:"lines"`
}
