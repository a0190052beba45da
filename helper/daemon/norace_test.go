//go:build !race

package daemon

const raceEnabled = false

// infoBound is the info latency the load test asserts (95th percentile of a phase): issue
// 17's goal itself.
const infoBound = infoGoal
