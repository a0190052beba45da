//go:build unix

package ipc

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"syscall"
)

// tryLock takes an exclusive advisory lock on f without waiting; busy reports that another
// process holds it. The kernel drops the lock when its holder exits, however it exits.
func tryLock(f *os.File) (busy bool, err error) {
	err = syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB)
	if errors.Is(err, syscall.EWOULDBLOCK) {
		return true, nil
	}
	return false, err
}

func unlock(f *os.File) error { return syscall.Flock(int(f.Fd()), syscall.LOCK_UN) }

// checkOwner refuses a file or directory that another user owns.
func checkOwner(path string, fi fs.FileInfo) error {
	st, ok := fi.Sys().(*syscall.Stat_t)
	if !ok {
		return fmt.Errorf("%s: cannot read its owner", path)
	}
	if uid := os.Getuid(); int(st.Uid) != uid {
		return fmt.Errorf("%s is owned by uid %d, not by this user (uid %d); refusing to use it", path, st.Uid, uid)
	}
	return nil
}

// detach makes the helper its own session leader, so it outlives the app that started it and
// does not receive the terminal's signals (Ctrl-C in the app's terminal).
func detach(cmd *exec.Cmd) {
	cmd.SysProcAttr = &syscall.SysProcAttr{Setsid: true}
}
