//go:build !race

package realign

const raceEnabled = false
