package dicom

import (
	"os/exec"
	"runtime"
	"syscall"
)

// runChild runs dcm2niix so that it dies with the helper: a helper killed with kill -9 runs
// no cleanup, and an orphaned dcm2niix went on writing into the conversion's temporary
// folder while the next helper removed it (scratch.Sweep). Linux sends Pdeathsig when the
// thread that started the child exits, so the goroutine keeps its thread until the child
// has ended.
func runChild(cmd *exec.Cmd) error {
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
	return cmd.Run()
}
