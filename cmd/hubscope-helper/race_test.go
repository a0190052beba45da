//go:build race

package main

// raceEnabled reports a -race build, where repeated whole runs (the kill -9 test) are many
// times slower; fewer are made.
const raceEnabled = true
