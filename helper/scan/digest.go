package scan

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"hash"
	"io"
	"os"
)

// FileDigest identifies one input file by content, for provenance: its size and the SHA-256
// of its bytes as stored on disk (the compressed bytes of a .nii.gz; `sha256sum FILE` prints
// the same digest).
type FileDigest struct {
	Path   string // as given to Load (Options.MaskPath for the mask)
	Bytes  int64
	SHA256 string // lower-case hex
}

// openInput opens an input file for reading; tests replace it to count the opens.
var openInput = os.Open

// hashingReader passes the bytes of a file through a SHA-256 as they are read.
type hashingReader struct {
	f *os.File
	h hash.Hash
	n int64
}

func newHashingReader(f *os.File) *hashingReader { return &hashingReader{f: f, h: sha256.New()} }

func (r *hashingReader) Read(p []byte) (int, error) {
	n, err := r.f.Read(p)
	r.h.Write(p[:n])
	r.n += int64(n)
	return n, err
}

// finish hashes whatever the parser left unread (trailing bytes after the data, the rest of
// a buffer's read-ahead is already hashed) so that the digest covers the whole file, then
// returns it. The file is read exactly once: every byte passes through the hash once.
func (r *hashingReader) finish(path string) (FileDigest, error) {
	n, err := io.Copy(r.h, r.f)
	r.n += n
	if err != nil {
		return FileDigest{}, fmt.Errorf("checksum %s: %w", path, err)
	}
	return FileDigest{Path: path, Bytes: r.n, SHA256: hex.EncodeToString(r.h.Sum(nil))}, nil
}

// digestAsync computes the FileDigest of path on its own goroutine, so that it overlaps the
// NIfTI stream that loads the same file: the NIfTI reader opens its files itself and offers
// no hook through which the hash could see its bytes, so the file is read twice, but the
// second read finds it in the page cache and is off the load's critical path (it used to run
// after the whole analysis, in provenance). wait returns the digest, or the error that ended
// it. Cancelling ctx stops the goroutine within one 1 MiB read, whether or not wait is called.
func digestAsync(ctx context.Context, path string) (wait func() (FileDigest, error)) {
	type result struct {
		d   FileDigest
		err error
	}
	done := make(chan result, 1)
	open := openInput
	go func() {
		f, err := open(path)
		if err != nil {
			done <- result{err: fmt.Errorf("checksum: %w", err)}
			return
		}
		defer f.Close()
		hr := newHashingReader(f)
		buf := make([]byte, 1<<20)
		for {
			if err := ctx.Err(); err != nil {
				done <- result{err: fmt.Errorf("checksum %s: %w", path, err)}
				return
			}
			_, err := hr.Read(buf)
			if err == io.EOF {
				break
			}
			if err != nil {
				done <- result{err: fmt.Errorf("checksum %s: %w", path, err)}
				return
			}
		}
		d, err := hr.finish(path)
		done <- result{d, err}
	}()
	return func() (FileDigest, error) {
		r := <-done
		return r.d, r.err
	}
}

// Digest is the size and SHA-256 of a file (as Scan.Inputs records them), for a caller that
// loads a derived copy of a file it was given (a realigned scan) and records the original.
func Digest(ctx context.Context, path string) (FileDigest, error) { return digestAsync(ctx, path)() }
