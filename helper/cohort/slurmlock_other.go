//go:build !unix

package cohort

import "errors"

// LockSlurm is LockSlurm of slurmlock_unix.go: Slurm's client commands (sbatch) run on Unix
// machines only, so a submission elsewhere is refused here, before anything is planned.
func LockSlurm(deriv string) (unlock func(), err error) {
	return nil, errors.New("--slurm submissions need a Unix machine with Slurm's client commands (sbatch)")
}
