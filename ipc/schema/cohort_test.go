package schema

import (
	"bytes"
	"encoding/json"
	"testing"
)

// roundTrip decodes golden, a file as the engine wrote it before its type moved here
// (json.MarshalIndent with two spaces and a final newline), into v and writes v again: the
// bytes must be the same, so the move renamed no key and changed no key's order.
func roundTrip(t *testing.T, golden string, v any) {
	t.Helper()
	dec := json.NewDecoder(bytes.NewReader([]byte(golden)))
	dec.DisallowUnknownFields()
	if err := dec.Decode(v); err != nil {
		t.Fatalf("decode %T: %v", v, err)
	}
	b, err := json.MarshalIndent(v, "", "  ")
	if err != nil {
		t.Fatal(err)
	}
	if got := string(b) + "\n"; got != golden {
		t.Fatalf("%T written again differs:\n%s\nwant:\n%s", v, got, golden)
	}
}

func TestCohortMarkerRoundTrip(t *testing.T) {
	const golden = `{
  "software": "HubScope",
  "version": "0.1.0",
  "input": {
    "path": "/data/bids/sub-01/func/sub-01_task-rest_bold.nii.gz",
    "bytes": 123456,
    "sha256": "9f86d081884c7d659a2feaa0c55ad015a3bf4f1b2b0b822cd15d6c15b0f00a08"
  },
  "settings": {
    "density": 0.01,
    "group.mean": "r",
    "hubs": "wang"
  },
  "files": {
    "sub-01_task-rest_desc-degree_hubscope.nii.gz": {
      "bytes": 2048,
      "sha256": "2c26b46b68ffc68ff99b453c1d30413413422d706483bfa0f98a5e886266e7ae"
    },
    "sub-01_task-rest_hubscope/metrics.json": {
      "bytes": 512,
      "sha256": "fcde2b2edba56bf408601fb721fe9b5c338d10ee429ea04fae5511b68fbf8fb9"
    }
  }
}
`
	roundTrip(t, golden, &CohortMarker{})
}

// TestSlurmStateRoundTrip: golden is what helper/cohort's SlurmState wrote before it became an
// alias of SlurmState (json.MarshalIndent of the old struct, generated once): a submission with
// both job ids and one without (omitted), times in UTC and another zone.
func TestSlurmStateRoundTrip(t *testing.T) {
	const golden = `{
  "bids": "/data/bids",
  "task": "rest",
  "settings": {
    "density": 0.01,
    "hubs": "wang"
  },
  "submissions": [
    {
      "dir": "20261128T060102Z",
      "submitted": "2026-11-28T06:01:02.345Z",
      "array_job": "4242",
      "group_job": "4243",
      "tasks": [
        [
          "01",
          "02"
        ],
        [
          "03"
        ]
      ]
    },
    {
      "dir": "20261128T070000Z",
      "submitted": "2026-11-28T08:01:02.345+01:00",
      "tasks": [
        [
          "04"
        ]
      ]
    }
  ]
}
`
	roundTrip(t, golden, &SlurmState{})
}

// TestCohortCopySidecarRoundTrip: golden is a copy sidecar as helper/cohort wrote it from a
// map[string]any before the struct (json.MarshalIndent sorts a map's keys; the struct's fields
// are in that order).
func TestCohortCopySidecarRoundTrip(t *testing.T) {
	const golden = `{
  "Description": "HubScope the hubs, most connected first",
  "Files": {
    ".edge": "hubs.edge",
    ".node": "hubs.node",
    ".tsv": "hubs.tsv"
  },
  "Settings": {
    "density": 0.01,
    "export": [
      "brainnet"
    ],
    "hubs": "wang"
  },
  "Sources": [
    "bids::sub-01/func/sub-01_task-rest_bold.nii.gz"
  ]
}
`
	roundTrip(t, golden, &CohortCopySidecar{})
}

// TestCohortTableSidecarRoundTrip: golden is measures.json as helper/cohort wrote it from a
// map[string]any of map[string]string before the types.
func TestCohortTableSidecarRoundTrip(t *testing.T) {
	const golden = `{
  "global.efficiency": {
    "Description": "metrics.json global.efficiency of the run's results bundle"
  },
  "network.edges": {
    "Description": "metrics.json network.edges of the run's results bundle"
  },
  "region_degree.1": {
    "Description": "metrics.json region_degree.1 of the run's results bundle"
  },
  "run": {
    "Description": "BIDS entities of the functional run"
  }
}
`
	var side CohortTableSidecar
	roundTrip(t, golden, &side)
}
