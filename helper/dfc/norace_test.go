//go:build !race

package dfc

const raceEnabled = false
