// Package nifti reads NIfTI-1 and NIfTI-2 images (.nii, .nii.gz, .hdr/.img pairs) and writes
// NIfTI-1 (.nii or .nii.gz). It is the only package that knows the byte layout.
//
// The header is validated completely before any data is touched or any buffer sized from it
// is allocated: dimensions, datatype, offsets, and the claimed data size against the file's
// real size (for gzip, against what the stream actually yields), so a 348-byte header can
// never make us allocate terabytes.
//
// Data are read as a stream of 3D volumes, in file order, scaled by scl_slope/scl_inter
// (NIfTI-1 §"scl_slope": a slope of 0 means no scaling).
package nifti

// CONTRACT (fixed; other packages code against these names):
//
//   type DataType int16  // NIfTI datatype codes: Uint8=2, Int16=4, Int32=8, Float32=16,
//                        // Float64=64, Int8=256, Uint16=512, Uint32=768, Int64=1024, Uint64=1280
//   const Uint8, Int8, Int16, Uint16, Int32, Uint32, Int64, Uint64, Float32, Float64 DataType
//   func (d DataType) String() string; func (d DataType) Size() int (bytes per value)
//
//   type Header struct {
//       Version    int        // 1 or 2
//       Dim        [8]int64   // Dim[0] = number of dimensions, Dim[1..] sizes (≥1)
//       PixDim     [8]float64 // PixDim[1..3] voxel size, PixDim[4] time step (units per XYZTUnits)
//       DataType   DataType
//       VoxOffset  int64
//       SclSlope, SclInter float64
//       XYZTUnits  uint8
//       QformCode, SformCode int32
//       QuaternB, QuaternC, QuaternD, QOffsetX, QOffsetY, QOffsetZ float64
//       SRowX, SRowY, SRowZ [4]float64
//       Descrip    string
//       IntentCode int32
//       LittleEndian bool
//   }
//   func (h *Header) Nx(), Ny(), Nz() int          // spatial sizes (1 when absent)
//   func (h *Header) Volumes() int                 // product of Dim[4..Dim[0]] (1 for 3D)
//   func (h *Header) VoxelsPerVolume() int
//   func (h *Header) Affine() [4][4]float64        // voxel ijk → world mm: sform when SformCode>0,
//                                                  // else qform when QformCode>0, else diag(pixdim)
//   func (h *Header) TR() float64                  // seconds, from PixDim[4] and XYZTUnits (ms→s, µs→s);
//                                                  // 0 when not a time series
//   func NewHeader(dims []int, dt DataType, affine [4][4]float64, tr float64) Header
//       // NIfTI-1 header with sform = qform = affine (codes 1/aligned), units mm + s,
//       // slope 1 (or 0), PixDim from the affine's column norms and tr.
//
//   type Reader struct { Header Header; Path string /* unexported fields */ }
//   func Open(path string) (*Reader, error)
//       // path may be .nii, .nii.gz, .hdr (data from .img/.img.gz beside it) or .img.
//       // Every error names the file and the problem: "open x.nii.gz: truncated header: got 120 of 348 bytes".
//   func (r *Reader) ReadVolume(dst []float32) error   // next volume in file order, scaled;
//                                                      // len(dst) must be VoxelsPerVolume(); io.EOF after the last
//   func (r *Reader) ReadVolume64(dst []float64) error // same in float64 (exact for all datatypes but (u)int64 > 2^53)
//   func (r *Reader) Close() error
//   func ReadImage(path string) (Header, []float32, error) // whole image (3D masks, atlases, maps)
//
//   type Writer struct { /* unexported */ }
//   func Create(path string, h Header) (*Writer, error)
//       // NIfTI-1; gzip when path ends in .gz. Writes to path+".tmp" (or a temp name in the
//       // same directory) and renames on a successful Close, so no half-written file looks complete.
//   func (w *Writer) WriteVolume(v []float32) error     // converts to h.DataType (rounding, clamping
//                                                       // for integer types after inverse scaling)
//   func (w *Writer) Close() error   // error if fewer volumes were written than the header claims
//   func (w *Writer) Abort()         // removes the temporary file
//   func WriteImage(path string, h Header, data []float32) error // all volumes at once
