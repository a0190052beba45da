//go:build !unix && !js

package ipc

import (
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"runtime"
)

func tryLock(f *os.File) (bool, error) {
	return false, fmt.Errorf("%s: file locks are not implemented on %s", f.Name(), runtime.GOOS)
}

func unlock(*os.File) error { return nil }

func checkOwner(path string, _ fs.FileInfo) error {
	return fmt.Errorf("%s: owner checks are not implemented on %s", path, runtime.GOOS)
}

func detach(*exec.Cmd) {}
