//go:build race

package realign

const raceEnabled = true
