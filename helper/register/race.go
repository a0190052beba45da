//go:build race

package register

// raceBuild: under the race detector (test builds only) Template gives the 4 mm template, so
// the race suite's registrations (the 2 mm level is ~10× slower under it) keep within CI's time.
const raceBuild = true
