//go:build unix

package cohort

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"syscall"
)

// LockSlurm takes DERIV/slurm/lock (flock, exclusive, not waiting) for one --slurm
// submission: planning reads state.json and numbers the submission folder, submitting writes
// both, and two submissions into one folder at once would pick the same folder and subjects
// and the later state.json would drop the earlier submission's jobs. A second submission is
// refused in one line while the first holds the lock; the kernel releases it when the holder
// exits, however it ends, so a killed submission never leaves the folder locked. unlock
// releases it (idempotent).
func LockSlurm(deriv string) (unlock func(), err error) {
	dir := filepath.Join(deriv, SlurmDir)
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, err
	}
	p := filepath.Join(dir, "lock")
	f, err := os.OpenFile(p, os.O_RDWR|os.O_CREATE, 0o644)
	if err != nil {
		return nil, err
	}
	for {
		err = syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB)
		if !errors.Is(err, syscall.EINTR) {
			break
		}
	}
	if err != nil {
		f.Close()
		if errors.Is(err, syscall.EWOULDBLOCK) {
			return nil, fmt.Errorf("%s: another --slurm submission into this folder is under way (it holds %s); run the command again once it has finished", deriv, p)
		}
		return nil, fmt.Errorf("%s: locking %s: %w", deriv, p, err)
	}
	return func() {
		if f != nil {
			f.Close() // closing the descriptor releases the lock
			f = nil
		}
	}, nil
}
