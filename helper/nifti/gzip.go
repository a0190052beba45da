package nifti

import (
	"compress/gzip"
	"errors"
	"io"

	kflate "github.com/klauspost/compress/flate"
	kgzip "github.com/klauspost/compress/gzip"
)

// gzipReader is the decompressor behind a .nii.gz Reader.
type gzipReader interface {
	io.Reader
	Close() error
}

// newGzipReader inflates with klauspost/compress: the same gzip format (multi-member streams,
// CRC-32 and size checks) as compress/gzip, decoded 15–20 % faster on scans (0.24 against 0.29
// CPU-s for a 123 MB int16 phantom run), which matters where a cohort's hundreds of files are
// read twice (helper/group).
func newGzipReader(r io.Reader) (gzipReader, error) { return kgzip.NewReader(r) }

// isGzipFormatError reports errors that mean the bytes are not a valid gzip stream.
func isGzipFormatError(err error) bool {
	var ce kflate.CorruptInputError
	return errors.Is(err, kgzip.ErrHeader) || errors.Is(err, kgzip.ErrChecksum) || errors.As(err, &ce) ||
		errors.Is(err, gzip.ErrHeader) || errors.Is(err, gzip.ErrChecksum)
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
