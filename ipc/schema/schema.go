// Package schema holds the file formats of a results bundle (docs/bundle.md): the Go types of
// metrics.json, dfc/summary.json, provenance.json and the bundle's other JSON files, and of
// the cohort folder's (cohort_complete.json, measures.json, slurm/state.json, a normative
// folder's norm.json; docs/bundle.md, "The cohort folder"), in one leaf package that the engine
// writes through and the desktop and browser apps read through, so a renamed or dropped key
// is a compile error on both sides. It imports only the standard library.
//
// A new bundle file's types go in a file of their own here (named after the bundle file),
// with the JSON keys as the file's documentation; the engine's packages may alias them
// (type X = schema.X) where their code builds the values.
package schema

// AppName is the product name every bundle records as its software.
const AppName = "HubScope"

// Version is the HubScope release, reported by the app, the helper and every results bundle.
const Version = "0.1.0"
