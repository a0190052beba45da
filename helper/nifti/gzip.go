package nifti

import (
	"compress/gzip"
	"errors"
	"io"
)

// gzipReader is the decompressor behind a .nii.gz Reader.
type gzipReader interface {
	io.Reader
	Close() error
}

func newGzipReader(r io.Reader) (gzipReader, error) { return gzip.NewReader(r) }

// isGzipFormatError reports errors that mean the bytes are not a valid gzip stream.
func isGzipFormatError(err error) bool {
	return errors.Is(err, gzip.ErrHeader) || errors.Is(err, gzip.ErrChecksum)
}

// gzipWriter is the compressor behind a .nii.gz Writer.
type gzipWriter interface {
	io.Writer
	Close() error
}

// gzipLevel trades size for speed as nibabel does (compresslevel 1): HubScope writes maps and
// phantoms of mostly smooth or zero data, where level 1 is within a few percent of level 6.
const gzipLevel = gzip.BestSpeed

func newGzipWriter(w io.Writer) gzipWriter {
	zw, _ := gzip.NewWriterLevel(w, gzipLevel) // the level is valid: no error
	return zw
}
