//go:build unix

package scratch

import (
	"os"
	"syscall"
)

// canSweep: signal 0 tells a dead process from a live one.
const canSweep = true

// ownedByMe reports whether fi's file belongs to this process's user.
func ownedByMe(fi os.FileInfo) bool {
	st, ok := fi.Sys().(*syscall.Stat_t)
	return ok && int(st.Uid) == os.Getuid()
}
