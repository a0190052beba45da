//go:build race

package cohort

// raceEnabled reports a -race build: the phantom cohorts shrink there (the pipeline runs 10–50×
// slower and the race detector learns nothing more from more subjects).
const raceEnabled = true
