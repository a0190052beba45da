package daemon

import (
	"context"
	"errors"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"syscall"

	"github.com/hubscope/hubscope/ipc"
)

// listFiles lists the regular files of a bundle (symbolic links and anything else left out),
// slash-separated and sorted.
func listFiles(dir string) ([]ipc.FileInfo, error) {
	var out []ipc.FileInfo
	err := filepath.WalkDir(dir, func(p string, e fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if !e.Type().IsRegular() {
			return nil
		}
		info, err := e.Info()
		if err != nil {
			return err
		}
		rel, err := filepath.Rel(dir, p)
		if err != nil {
			return err
		}
		out = append(out, ipc.FileInfo{Name: filepath.ToSlash(rel), Size: info.Size()})
		return nil
	})
	sort.Slice(out, func(a, b int) bool { return out[a].Name < out[b].Name })
	if out == nil {
		out = []ipc.FileInfo{}
	}
	return out, err
}

// Files lists a finished job's bundle.
func (d *Daemon) Files(ctx context.Context, id string) ([]ipc.FileInfo, error) {
	_, dir, err := d.finished(id)
	if err != nil {
		return nil, err
	}
	return listFiles(dir)
}

// OpenFile opens one regular file of a finished job's bundle. The name must be relative,
// slash-separated and free of "..", and no element of the path may be a symbolic link: the
// resolved path (filepath.EvalSymlinks of both the bundle and the file) must be exactly the
// bundle's resolved path joined with the name, and the final open refuses a link that might
// have been planted in between (O_NOFOLLOW).
func (d *Daemon) OpenFile(ctx context.Context, id, name string) (io.ReadCloser, ipc.FileInfo, error) {
	_, dir, err := d.finished(id)
	if err != nil {
		return nil, ipc.FileInfo{}, err
	}
	refuse := func(why string) (io.ReadCloser, ipc.FileInfo, error) {
		return nil, ipc.FileInfo{}, ipc.Errorf(ipc.CodeBadRequest, "file %q: %s", name, why)
	}
	if name == "" || strings.HasPrefix(name, "/") || strings.Contains(name, "\\") || strings.ContainsRune(name, 0) {
		return refuse("want a relative, slash-separated name inside the bundle")
	}
	for _, el := range strings.Split(name, "/") {
		if el == "" || el == "." || el == ".." {
			return refuse("want a relative, slash-separated name inside the bundle")
		}
	}
	root, err := filepath.EvalSymlinks(dir)
	if err != nil {
		return nil, ipc.FileInfo{}, err
	}
	want := filepath.Join(root, filepath.FromSlash(name))
	got, err := filepath.EvalSymlinks(filepath.Join(dir, filepath.FromSlash(name)))
	if errors.Is(err, fs.ErrNotExist) {
		return nil, ipc.FileInfo{}, ipc.Errorf(ipc.CodeNotFound, "job %s has no file %q", id, name)
	}
	if err != nil {
		return nil, ipc.FileInfo{}, err
	}
	if got != want {
		return nil, ipc.FileInfo{}, ipc.Errorf(ipc.CodeForbidden, "file %q is a symbolic link or passes through one", name)
	}
	f, err := os.OpenFile(want, os.O_RDONLY|syscall.O_NOFOLLOW, 0)
	if err != nil {
		return nil, ipc.FileInfo{}, ipc.Errorf(ipc.CodeForbidden, "file %q cannot be opened safely", name)
	}
	fi, err := f.Stat()
	if err != nil || !fi.Mode().IsRegular() {
		f.Close()
		return nil, ipc.FileInfo{}, ipc.Errorf(ipc.CodeForbidden, "file %q is not a regular file", name)
	}
	return f, ipc.FileInfo{Name: name, Size: fi.Size()}, nil
}
