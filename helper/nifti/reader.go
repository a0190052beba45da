package nifti

import (
	"bufio"
	"bytes"
	"compress/flate"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
)

// FileError is a problem with one file: Op is "open", "read" or "write", Path the file as the
// caller named it (or the .img/.hdr beside it), Err the problem.
type FileError struct {
	Op   string
	Path string
	Err  error
}

func (e *FileError) Error() string { return e.Op + " " + e.Path + ": " + e.Err.Error() }
func (e *FileError) Unwrap() error { return e.Err }

// chunkBytes bounds the raw buffer a Reader or Writer allocates, whatever the volume size:
// values are converted chunk by chunk straight into the caller's slice, so a header claiming a
// huge volume costs no memory until the caller provides the destination.
const chunkBytes = 1 << 20

// drainLimit is how many bytes past the image data a gzip Reader reads, after the last
// volume, to reach the stream's end and have its CRC-32 and length checked.
const drainLimit = 64 << 20

// Reader streams the volumes of one NIfTI image in file order. It holds one raw chunk of at
// most 1 MiB besides the caller's destination. It is not safe for concurrent use.
type Reader struct {
	Header Header
	Path   string // the path given to Open
	// Warnings are the header's oddities that the reader works around (Header.Check), in the
	// order Check finds them; empty for a clean header.
	Warnings []Warning

	dataPath  string // the file holding the voxel data (Path, or the .img of a pair)
	fsys      fs.FS  // where the files are (OpenFS); nil: the operating system's files
	files     []fs.File
	src       io.Reader // positioned at the next raw value
	gz        gzipReader
	remaining int64 // values not yet read
	total     int64 // values in the image
	chunk     []byte
	slope     float64
	inter     float64
	scaled    bool
	swap      bool
	err       error // sticky: after a data error every read returns it
}

// Open reads and validates the header of a NIfTI-1 or NIfTI-2 image and positions the reader
// at its first volume. path may be .nii, .nii.gz, a .hdr (data read from the .img or .img.gz
// beside it) or a .img/.img.gz (header from the .hdr beside it). Compression is recognised by
// the gzip magic bytes, not the name. Errors name the file and the problem, e.g.
// "open x.nii.gz: truncated header: got 120 of 348 bytes".
func Open(path string) (*Reader, error) {
	hdrPath, dataPath, pairFile, err := pairPaths(path)
	if err != nil {
		return nil, err
	}
	r := &Reader{Path: path, dataPath: dataPath}
	if err := r.open(hdrPath, pairFile); err != nil {
		r.Close()
		return nil, err
	}
	return r, nil
}

// OpenFS is Open for a single-file image (.nii or .nii.gz) in fsys, such as an embedded
// asset: read in place, with no copy in a temporary folder that a killed process would leave
// behind.
func OpenFS(fsys fs.FS, path string) (*Reader, error) {
	r := &Reader{Path: path, dataPath: path, fsys: fsys}
	if err := r.open(path, false); err != nil {
		r.Close()
		return nil, err
	}
	return r, nil
}

// pairPaths finds the header and data files for a path.
func pairPaths(path string) (hdrPath, dataPath string, pair bool, err error) {
	lower := strings.ToLower(path)
	swapExt := func(from, to string) []string {
		// Keep the caller's case for the stem; try the other file's extension in the same
		// case as the given one, plain and gzipped.
		stem := path[:len(path)-len(from)]
		ext := to
		if path[len(path)-len(from):] == strings.ToUpper(from) {
			ext = strings.ToUpper(to)
		}
		gz := ".gz"
		if ext != to {
			gz = ".GZ"
		}
		return []string{stem + ext, stem + ext + gz}
	}
	firstExisting := func(cands []string) string {
		for _, c := range cands {
			if _, err := os.Stat(c); err == nil {
				return c
			}
		}
		return ""
	}
	switch {
	case strings.HasSuffix(lower, ".hdr") || strings.HasSuffix(lower, ".hdr.gz"):
		from := path[len(path)-len(".hdr"):]
		if strings.HasSuffix(lower, ".gz") {
			from = path[len(path)-len(".hdr.gz"):]
		}
		cands := swapExt(from, ".img")
		if d := firstExisting(cands); d != "" {
			return path, d, true, nil
		}
		return "", "", true, &FileError{"open", path, fmt.Errorf("data file %s (or %s) for this header: %w", filepath.Base(cands[0]), filepath.Base(cands[1]), os.ErrNotExist)}
	case strings.HasSuffix(lower, ".img") || strings.HasSuffix(lower, ".img.gz"):
		from := path[len(path)-len(".img"):]
		if strings.HasSuffix(lower, ".gz") {
			from = path[len(path)-len(".img.gz"):]
		}
		if _, err := os.Stat(path); err != nil {
			return "", "", true, err
		}
		cands := swapExt(from, ".hdr")
		if h := firstExisting(cands); h != "" {
			return h, path, true, nil
		}
		return "", "", true, &FileError{"open", path, fmt.Errorf("header file %s (or %s) for this image: %w", filepath.Base(cands[0]), filepath.Base(cands[1]), os.ErrNotExist)}
	}
	return path, path, false, nil
}

// openStream opens a file for sequential reading, decompressing it when it starts with the
// gzip magic bytes 1f 8b.
func (r *Reader) openStream(path string) (io.Reader, gzipReader, int64, error) {
	var f fs.File
	var err error
	if r.fsys != nil {
		f, err = r.fsys.Open(path)
	} else {
		f, err = os.Open(path)
	}
	if err != nil {
		return nil, nil, 0, err // *fs.PathError: "open PATH: no such file or directory"
	}
	r.files = append(r.files, f)
	st, err := f.Stat()
	if err != nil {
		return nil, nil, 0, err
	}
	if st.IsDir() {
		return nil, nil, 0, &FileError{"open", path, errors.New("is a directory")}
	}
	br := bufio.NewReaderSize(f, 256<<10)
	magic, _ := br.Peek(2)
	if len(magic) == 2 && magic[0] == 0x1f && magic[1] == 0x8b {
		gz, err := newGzipReader(br)
		if err != nil {
			return nil, nil, 0, &FileError{"open", path, gzipError(err)}
		}
		return gz, gz, -1, nil
	}
	return br, nil, st.Size(), nil
}

func (r *Reader) open(hdrPath string, pairFile bool) error {
	src, gz, size, err := r.openStream(hdrPath)
	if err != nil {
		return err
	}
	fail := func(path string, err error) error { return &FileError{"open", path, err} }

	// Read sizeof_hdr first: it decides the version and so how many more bytes the header has.
	buf := make([]byte, nifti2HeaderSize)
	n, err := io.ReadFull(src, buf[:4])
	if err != nil {
		if err = streamError(err, gz != nil); errors.Is(err, ErrCorruptGzip) {
			return fail(hdrPath, err)
		}
		return fail(hdrPath, invalid(ErrTruncated, "truncated header: got %d of %d bytes", n, nifti1HeaderSize))
	}
	version, _, err := sniffHeader(buf[:4])
	if err != nil {
		if gz == nil && strings.HasSuffix(strings.ToLower(hdrPath), ".gz") {
			return fail(hdrPath, fmt.Errorf("%w: not gzip data (no 1f 8b magic) and %v", ErrCorruptGzip, err))
		}
		return fail(hdrPath, err)
	}
	hs := headerSize(version)
	m, err := io.ReadFull(src, buf[4:hs])
	if err != nil {
		if err = streamError(err, gz != nil); errors.Is(err, ErrCorruptGzip) {
			return fail(hdrPath, err)
		}
		return fail(hdrPath, invalid(ErrTruncated, "truncated header: got %d of %d bytes", 4+m, hs))
	}
	h, pairMagic, err := decodeHeader(buf[:hs])
	if err != nil {
		return fail(hdrPath, err)
	}
	switch {
	case pairMagic && !pairFile:
		return fail(hdrPath, invalid(ErrInvalidHeader, "header magic says the data are in a separate .img file (a .hdr/.img pair), but this is a single-file name"))
	case !pairMagic && pairFile:
		return fail(hdrPath, invalid(ErrInvalidHeader, "single-file (n+%d) magic in a .hdr/.img pair", h.Version))
	}
	r.Header = h
	r.Warnings = h.Check()

	// Position at the first value: single files skip extensions up to vox_offset; pairs start
	// the .img at vox_offset.
	skip := h.VoxOffset - int64(hs)
	if pairFile {
		if src, gz, size, err = r.openStream(r.dataPath); err != nil {
			return err
		}
		skip = h.VoxOffset
	}
	need := h.dataBytes()
	if size >= 0 && h.VoxOffset+need > size {
		return fail(r.dataPath, invalid(ErrTruncated, "claimed data size larger than the file: header says %d bytes of %s data at offset %d, file has %d bytes",
			need, h.DataType, h.VoxOffset, size))
	}
	if k, err := io.CopyN(io.Discard, src, skip); err != nil {
		if err = streamError(err, gz != nil); errors.Is(err, ErrCorruptGzip) {
			return fail(r.dataPath, err)
		}
		return fail(r.dataPath, invalid(ErrTruncated, "truncated data: stream ends %d bytes before vox_offset %d", skip-k, h.VoxOffset))
	}
	r.src, r.gz = src, gz
	r.total = int64(h.VoxelsPerVolume()) * int64(h.Volumes())
	r.remaining = r.total
	r.slope, r.inter, r.scaled = h.scaling()
	r.swap = h.LittleEndian != nativeLittle && h.DataType.Size() > 1
	return nil
}

// streamError turns a read error into the package's vocabulary: gzip and deflate failures
// become ErrCorruptGzip; a compressed stream cut short (io.ErrUnexpectedEOF from the
// decompressor) stays a truncation.
func streamError(err error, compressed bool) error {
	if !compressed || err == io.EOF || err == io.ErrUnexpectedEOF {
		return err
	}
	return gzipError(err)
}

func gzipError(err error) error {
	var ce flate.CorruptInputError
	if errors.As(err, &ce) || isGzipFormatError(err) {
		return fmt.Errorf("%w: %v", ErrCorruptGzip, err)
	}
	return err
}

// ReadVolume reads the next volume in file order into dst (len VoxelsPerVolume), scaled by
// scl_slope/scl_inter. It returns io.EOF after the last volume.
func (r *Reader) ReadVolume(dst []float32) error { return readVolume(r, dst) }

// ReadVolume64 is ReadVolume in float64: exact for every datatype except (u)int64 values
// beyond 2^53, and the scaling is computed as nibabel's get_fdata computes it.
func (r *Reader) ReadVolume64(dst []float64) error { return readVolume(r, dst) }

// ReadRawVolume reads the next volume in file order as stored: its VoxelsPerVolume values of
// the header's datatype, unscaled, in this machine's byte order, into dst (len
// VoxelsPerVolume·DataType.Size()). Header.Decode then gives exactly what ReadVolume would
// have: a caller may keep a volume, or some of its voxels, in the stored type (2 bytes for
// int16 instead of 4) and convert them later. It returns io.EOF after the last volume.
func (r *Reader) ReadRawVolume(dst []byte) error {
	if r.err != nil {
		return r.err
	}
	if r.src == nil {
		return &FileError{"read", r.Path, errors.New("reader is closed")}
	}
	if r.remaining == 0 {
		return io.EOF
	}
	n := r.Header.VoxelsPerVolume()
	size := r.Header.DataType.Size()
	if len(dst) != n*size {
		return &FileError{"read", r.Path, fmt.Errorf("destination holds %d bytes, one volume has %d", len(dst), n*size)}
	}
	if got, err := io.ReadFull(r.src, dst); err != nil {
		r.err = r.dataError(err, int64(got))
		return r.err
	}
	if r.swap {
		swapBytes(dst, size)
	}
	r.remaining -= int64(n)
	return r.drainAtEnd()
}

// wholeLimit bounds the compressed file that InflateAll reads into memory at once.
const wholeLimit = 1 << 30

// InflateAll decodes every remaining volume of a .nii.gz at once, before any volume is read,
// when this build has a whole-member inflater (libdeflate: inflate_libdeflate.go) and the
// file is one gzip member whose trailer's size (ISIZE) holds the header's data (and at most
// drainLimit bytes after them, as the stream allows): the stored values of every volume, as
// ReadRawVolume would give them one after another (native byte order, unscaled), in buf when
// it is large enough (the file's whole inflated size) and otherwise in a new buffer, returned
// as all so that the caller can reuse it. The trailer's CRC-32 and size are checked against
// the data. values is nil, and the Reader streams as before, for anything else: a plain file,
// a .hdr/.img pair, several gzip members, more than 4 GiB (ISIZE counts modulo 2³²), a build
// without libdeflate, and a stream that libdeflate refuses (corrupt or truncated: the stream's
// reads then report it, naming the file and the volume). After values are returned every
// read gives io.EOF.
func (r *Reader) InflateAll(buf []byte) (values, all []byte) {
	if !libdeflateBuilt || r.gz == nil || r.err != nil || r.src == nil || r.remaining != r.total || r.dataPath != r.Path || len(r.files) != 1 {
		return nil, nil
	}
	f, ok := r.files[0].(io.ReaderAt)
	if !ok {
		return nil, nil
	}
	st, err := r.files[0].Stat()
	if err != nil || st.Size() < 18 || st.Size() > wholeLimit {
		return nil, nil
	}
	src := make([]byte, st.Size())
	if _, err := f.ReadAt(src, 0); err != nil {
		return nil, nil
	}
	isize := int64(binary.LittleEndian.Uint32(src[len(src)-4:]))
	start, end := r.Header.VoxOffset, r.Header.VoxOffset+r.Header.dataBytes()
	// Deflate cannot expand more than 1032-fold (a 258-byte match per two bits at best), so a
	// trailer claiming more than that of this file is false: no buffer is sized from it.
	if isize < end || isize > end+drainLimit || isize > 1032*st.Size() {
		return nil, nil
	}
	if int64(cap(buf)) < isize {
		buf = nil // let the old one go before the new one is made
		buf = make([]byte, isize)
	}
	out := buf[:isize]
	if !inflateWhole(out, src) {
		return nil, nil
	}
	values = out[start:end]
	if r.swap {
		swapBytes(values, r.Header.DataType.Size())
	}
	r.gz.Close()
	r.gz = nil
	r.src = bytes.NewReader(nil)
	r.remaining = 0
	return values, buf
}

// Decode converts stored values (native byte order, as ReadRawVolume gives them; len(raw) a
// multiple of the datatype's size) into dst, scaled by scl_slope/scl_inter exactly as
// ReadVolume does.
func (h *Header) Decode(dst []float32, raw []byte) {
	slope, inter, scaled := h.scaling()
	decode(dst, raw, h.DataType, slope, inter, scaled)
}

// Scaled reports whether values are scaled on read (scl_slope/scl_inter other than none or
// the identity): unscaled integer values read as themselves.
func (h *Header) Scaled() bool {
	_, _, ok := h.scaling()
	return ok
}

// Decode64 is Decode in float64, exactly as ReadVolume64.
func (h *Header) Decode64(dst []float64, raw []byte) {
	slope, inter, scaled := h.scaling()
	decode(dst, raw, h.DataType, slope, inter, scaled)
}

func readVolume[D float32 | float64](r *Reader, dst []D) error {
	if r.err != nil {
		return r.err
	}
	if r.src == nil {
		return &FileError{"read", r.Path, errors.New("reader is closed")}
	}
	if r.remaining == 0 {
		return io.EOF
	}
	if n := r.Header.VoxelsPerVolume(); len(dst) != n {
		return &FileError{"read", r.Path, fmt.Errorf("destination holds %d values, one volume has %d", len(dst), n)}
	}
	return readValues(r, dst)
}

// readValues fills dst with the next len(dst) ≤ remaining values, chunk by chunk.
func readValues[D float32 | float64](r *Reader, dst []D) error {
	dt := r.Header.DataType
	size := dt.Size()
	if r.chunk == nil {
		n := min(int64(chunkBytes), r.total*int64(size))
		r.chunk = make([]byte, n-n%int64(size))
	}
	perChunk := len(r.chunk) / size
	for done := 0; done < len(dst); {
		n := min(perChunk, len(dst)-done)
		raw := r.chunk[:n*size]
		got, err := io.ReadFull(r.src, raw)
		if err != nil {
			r.err = r.dataError(err, int64(got))
			return r.err
		}
		if r.swap {
			swapBytes(raw, size)
		}
		decode(dst[done:done+n], raw, dt, r.slope, r.inter, r.scaled)
		done += n
		r.remaining -= int64(n)
	}
	return r.drainAtEnd()
}

// drainAtEnd reads to the end of a gzip stream once the last value is read: that makes the
// decompressor check the CRC-32 and length in its trailer; corruption in the last volume
// would otherwise pass unseen.
func (r *Reader) drainAtEnd() error {
	if r.remaining == 0 && r.gz != nil {
		if _, err := io.CopyN(io.Discard, r.src, drainLimit); err != nil && err != io.EOF {
			r.err = r.dataError(err, 0)
			return r.err
		}
	}
	return nil
}

func (r *Reader) dataError(err error, got int64) error {
	size := int64(r.Header.DataType.Size())
	if err = streamError(err, r.gz != nil); err == io.EOF || err == io.ErrUnexpectedEOF {
		done := (r.total-r.remaining)*size + got
		err = invalid(ErrTruncated, "truncated data: got %d of %d bytes", done, r.total*size)
	}
	return &FileError{"read", r.dataPath, err}
}

// Close releases the files. It is safe to call more than once.
func (r *Reader) Close() error {
	var first error
	if r.gz != nil {
		first = r.gz.Close()
		r.gz = nil
	}
	for _, f := range r.files {
		if err := f.Close(); err != nil && first == nil {
			first = err
		}
	}
	r.files, r.src = nil, nil
	return first
}

// ReadImage reads a whole image (all volumes, in file order, scaled) into one slice: for 3D
// masks, atlases and maps. Memory grows with the data actually read, so a header that claims
// more than a gzip stream holds fails with a truncation error rather than a huge allocation.
func ReadImage(path string) (Header, []float32, error) {
	r, err := Open(path)
	if err != nil {
		return Header{}, nil, err
	}
	return r.readAll()
}

// ReadImageFS is ReadImage for a single-file image in fsys (OpenFS).
func ReadImageFS(fsys fs.FS, path string) (Header, []float32, error) {
	r, err := OpenFS(fsys, path)
	if err != nil {
		return Header{}, nil, err
	}
	return r.readAll()
}

// readAll reads every value of the image and closes the reader.
func (r *Reader) readAll() (Header, []float32, error) {
	defer r.Close()
	if r.gz == nil {
		// A plain file's size has been checked against the header: allocate once.
		out := make([]float32, r.total)
		if err := readValues(r, out); err != nil {
			return Header{}, nil, err
		}
		return r.Header, out, nil
	}
	const step = 1 << 20
	var out []float32
	for int64(len(out)) < r.total {
		n := int(min(r.total-int64(len(out)), step))
		out = slices.Grow(out, n)
		if err := readValues(r, out[len(out):len(out)+n]); err != nil {
			return Header{}, nil, err
		}
		out = out[:len(out)+n]
	}
	return r.Header, out, nil
}
