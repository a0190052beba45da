//go:build !unix

package scratch

import "os"

// canSweep: without signal 0 (Windows) a dead process cannot be told from a live one, so
// SweepTemp removes nothing.
const canSweep = false

func ownedByMe(os.FileInfo) bool { return false }
