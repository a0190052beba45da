//go:build race

package sweep

// raceEnabled reports a -race build: the test networks shrink there (the products run 10–50×
// slower and the race detector learns nothing more from more nodes).
const raceEnabled = true
