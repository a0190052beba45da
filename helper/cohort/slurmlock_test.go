//go:build unix

package cohort

import (
	"strings"
	"testing"
)

// TestLockSlurm: while one submission holds DERIV/slurm/lock a second is refused with one
// line naming the folder and the lock; after the first unlocks (or its process ends) the
// next one gets it.
func TestLockSlurm(t *testing.T) {
	deriv := t.TempDir()
	unlock, err := LockSlurm(deriv)
	if err != nil {
		t.Fatal(err)
	}
	_, err = LockSlurm(deriv)
	if err == nil || !strings.Contains(err.Error(), "another --slurm submission into this folder is under way") || !strings.Contains(err.Error(), deriv+"/slurm/lock") {
		t.Fatalf("second submission: %v, want the refusal naming the lock", err)
	}
	unlock()
	unlock() // idempotent
	again, err := LockSlurm(deriv)
	if err != nil {
		t.Fatalf("after unlock: %v", err)
	}
	again()
}
