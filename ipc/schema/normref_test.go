package schema

import "testing"

// TestNormReferenceRoundTrip: golden is what helper/norm's Info wrote before it became an
// alias of NormReference (json.MarshalIndent of the old struct, generated once).
func TestNormReferenceRoundTrip(t *testing.T) {
	const golden = `{
  "software": "HubScope",
  "version": "0.1.0",
  "subjects": [
    "01",
    "02",
    "03"
  ],
  "grid": [
    4,
    5,
    6
  ],
  "affine": [
    [
      -3,
      0,
      0,
      90
    ],
    [
      0,
      3,
      0,
      -126
    ],
    [
      0,
      0,
      3,
      -72
    ],
    [
      0,
      0,
      0,
      1
    ]
  ],
  "nodes": 97,
  "maps": [
    "degree",
    "strength",
    "sweep_degree_r0.3"
  ],
  "hub_rule": "cohort mean degree \u003e mean + 1 SD",
  "hubs": 12,
  "threshold_hubs": {
    "sweep_degree_r0.3": 9
  },
  "settings": {
    "denoise": "auto",
    "density": 0.01,
    "group.mean": "r"
  }
}
`
	roundTrip(t, golden, &NormReference{})
}
