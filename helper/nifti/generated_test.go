package nifti

import (
	"encoding/binary"
	"fmt"
	"io"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/hubscope/hubscope/helper/internal/pyref"
)

// generatedCase is one image laid out byte by byte by rawHeader: a version, byte order,
// storage (single file or .hdr/.img pair, plain or gzip), datatype and scaling.
type generatedCase struct {
	version   int
	order     binary.ByteOrder
	dt        DataType
	pair      bool
	gz        bool
	slope     float64
	inter     float64
	extension bool // a 32-byte header extension before the data (single files)
	qformOnly bool
	units     uint8
}

func (c generatedCase) name() string {
	o := "le"
	if c.order == binary.BigEndian {
		o = "be"
	}
	ext := ".nii"
	if c.pair {
		ext = ".hdr"
	}
	if c.gz {
		ext += ".gz"
	}
	return fmt.Sprintf("v%d_%s_%s_s%g_i%g_x%v_q%v_u%d%s", c.version, o, c.dt, c.slope, c.inter, c.extension, c.qformOnly, c.units, ext)
}

// write creates the image in dir and returns the path to open.
func (c generatedCase) write(t *testing.T, dir string, rng *rand.Rand) string {
	t.Helper()
	dims := []int{4, 3, 5, 3}
	h := NewHeader(dims, c.dt, testAffine(), 1500)
	h.SclSlope, h.SclInter = c.slope, c.inter
	h.XYZTUnits = UnitsMM | c.units
	if c.qformOnly {
		h.SformCode = 0
	}
	hdr := rawHeader(t, c.version, c.order, &h, c.pair)
	if c.extension && !c.pair {
		// Extension flag, then one extension: esize 32 (a multiple of 16), ecode 6 (comment).
		off := len(hdr) - 4
		hdr[off] = 1
		ext := make([]byte, 32)
		c.order.PutUint32(ext[0:], 32)
		c.order.PutUint32(ext[4:], 6)
		copy(ext[8:], "HubScope test extension")
		hdr = append(hdr, ext...)
		voxOffset := int64(len(hdr))
		if c.version == 1 {
			c.order.PutUint32(hdr[108:], mathFloat32bits(float32(voxOffset)))
		} else {
			c.order.PutUint64(hdr[168:], uint64(voxOffset))
		}
	}
	data := make([]byte, 4*3*5*3*c.dt.Size())
	for i := range data {
		data[i] = byte(rng.Uint32())
	}
	if c.dt == Float32 || c.dt == Float64 {
		// Random bytes make NaNs and huge exponents; keep values finite and varied instead.
		for i := 0; i < len(data); i += c.dt.Size() {
			if c.dt == Float32 {
				c.order.PutUint32(data[i:], mathFloat32bits(float32(rng.NormFloat64()*1e3)))
			} else {
				c.order.PutUint64(data[i:], mathFloat64bits(rng.NormFloat64()*1e3))
			}
		}
	}
	name := filepath.Join(dir, c.name())
	put := func(path string, b []byte) {
		if c.gz {
			b = gzipBytes(b)
		}
		if err := os.WriteFile(path, b, 0o600); err != nil {
			t.Fatal(err)
		}
	}
	if c.pair {
		stem := name[:len(name)-len(".hdr")]
		if c.gz {
			stem = name[:len(name)-len(".hdr.gz")]
		}
		put(name, hdr)
		img := stem + ".img"
		if c.gz {
			img += ".gz"
		}
		put(img, data)
		return name
	}
	put(name, append(hdr, data...))
	return name
}

func generatedCases() []generatedCase {
	var cs []generatedCase
	for _, v := range []int{1, 2} {
		for _, o := range []binary.ByteOrder{binary.LittleEndian, binary.BigEndian} {
			for _, dt := range allTypes {
				c := generatedCase{version: v, order: o, dt: dt, slope: 1, units: UnitsMsec}
				cs = append(cs, c)
			}
			cs = append(cs,
				generatedCase{version: v, order: o, dt: Int16, slope: 0.5, inter: -3, gz: true, extension: true, units: UnitsSec},
				generatedCase{version: v, order: o, dt: Uint8, slope: 0, inter: 7, pair: true, units: UnitsUsec},
				generatedCase{version: v, order: o, dt: Float32, slope: 2, inter: 1, pair: true, gz: true, qformOnly: true},
				generatedCase{version: v, order: o, dt: Int32, slope: 1, pair: true, gz: false, qformOnly: true, units: UnitsSec},
			)
		}
	}
	return cs
}

// TestGeneratedImagesMatchNibabel lays out images in every version, byte order, storage and
// datatype by hand and checks that we and nibabel read the same geometry and values.
func TestGeneratedImagesMatchNibabel(t *testing.T) {
	dir := t.TempDir()
	rng := rand.New(rand.NewPCG(3, 4))
	cases := generatedCases()
	paths := make([]string, len(cases))
	for i, c := range cases {
		paths[i] = c.write(t, dir, rng)
	}
	infos := runNibabel(t, paths...)
	for i, c := range cases {
		t.Run(c.name(), func(t *testing.T) {
			checkAgainstNibabel(t, paths[i], infos[i])
			r, err := Open(paths[i])
			if err != nil {
				t.Fatal(err)
			}
			defer r.Close()
			if r.Header.Version != c.version || r.Header.LittleEndian != (c.order == binary.LittleEndian) {
				t.Errorf("version %d little-endian %v", r.Header.Version, r.Header.LittleEndian)
			}
			// ReadVolume is ReadVolume64 rounded once to float32.
			_, all64 := readAll64(t, paths[i])
			vol := make([]float32, r.Header.VoxelsPerVolume())
			for v := 0; ; v++ {
				err := r.ReadVolume(vol)
				if err == io.EOF {
					break
				}
				if err != nil {
					t.Fatal(err)
				}
				for j, x := range vol {
					if want := float32(all64[v*len(vol)+j]); x != want {
						t.Fatalf("volume %d voxel %d: float32 %v, float64 %v", v, j, x, all64[v*len(vol)+j])
					}
				}
			}
			// Opening the .img of a pair finds the header beside it.
			if c.pair {
				img := paths[i][:len(paths[i])-len(".hdr")] + ".img"
				if c.gz {
					img = paths[i][:len(paths[i])-len(".hdr.gz")] + ".img.gz"
				}
				_, data, err := ReadImage(img)
				if err != nil {
					t.Fatal(err)
				}
				for j := range data {
					if data[j] != float32(all64[j]) {
						t.Fatalf("via %s: value %d = %v, want %v", img, j, data[j], all64[j])
					}
				}
			}
		})
	}
}

// nibabelWriteScript saves images the way other software does, through nibabel: a NIfTI-2
// single file, a big-endian NIfTI-1 (header and data byte-swapped), a NIfTI-1 .hdr/.img pair,
// a gzipped NIfTI-2 pair, scaled int16 with a header extension, and a qform-only oblique image.
const nibabelWriteScript = `
import sys, os
import numpy as np, nibabel as nib
d = sys.argv[1]
rng = np.random.default_rng(7)
c, s = np.cos(0.4), np.sin(0.4)
aff = np.array([[2.0*c, -2.0*s, 0, -30], [2.0*s, 2.0*c, 0, 12.5], [0, 0, -3.0, 40], [0, 0, 0, 1]])
paths = []
def save(img, name):
    p = os.path.join(d, name); nib.save(img, p); paths.append(p)
data = rng.normal(0, 100, (5, 4, 3, 6)).astype(np.float32)
img = nib.Nifti2Image(data, aff); img.header.set_xyzt_units("mm", "msec"); img.header["pixdim"][4] = 1500
save(img, "nib2.nii")
be = nib.Nifti1Image(rng.integers(-3000, 3000, (6, 5, 4, 3)).astype(">i2"), aff, header=nib.Nifti1Header(endianness=">"))
be.header.set_xyzt_units("mm", "sec"); be.header["pixdim"][4] = 2.0
save(be, "nib_be.nii")
save(nib.Nifti1Pair(rng.integers(0, 255, (7, 3, 2)).astype(np.uint8), aff), "nib_pair.hdr")
save(nib.Nifti2Pair(rng.normal(0, 1, (3, 3, 3, 2)), aff), "nib2_pair.img.gz")
sc = nib.Nifti1Image(rng.normal(500, 200, (4, 4, 4, 5)), aff)
sc.set_data_dtype(np.int16)
sc.header.extensions.append(nib.nifti1.Nifti1Extension("comment", b"HubScope test extension"))
save(sc, "nib_scaled.nii.gz")
q = nib.Nifti1Image(rng.integers(0, 1000, (3, 4, 5)).astype(np.uint16), aff)
q.header.set_sform(None, code=0); q.header.set_qform(aff, code=1)
save(q, "nib_qform.nii")
print("\n".join(paths))
`

// TestNibabelWrittenImages: images nibabel writes (NIfTI-2, big-endian, pairs, extensions,
// scaling) read as nibabel reads them.
func TestNibabelWrittenImages(t *testing.T) {
	pyref.Require(t, "numpy", "nibabel")
	out := strings.TrimSpace(string(pyref.Run(t, nibabelWriteScript, t.TempDir())))
	paths := strings.Split(out, "\n")
	if len(paths) != 6 {
		t.Fatalf("reference wrote %d images: %q", len(paths), out)
	}
	infos := runNibabel(t, paths...)
	want := map[string]struct {
		version int
		little  bool
		scaled  bool
	}{
		"nib2.nii": {2, true, false}, "nib_be.nii": {1, false, false}, "nib_pair.hdr": {1, true, false},
		"nib2_pair.img.gz": {2, true, false}, "nib_scaled.nii.gz": {1, true, true}, "nib_qform.nii": {1, true, false},
	}
	for i, p := range paths {
		t.Run(filepath.Base(p), func(t *testing.T) {
			checkAgainstNibabel(t, p, infos[i])
			r, err := Open(p)
			if err != nil {
				t.Fatal(err)
			}
			defer r.Close()
			w := want[filepath.Base(p)]
			_, _, scaled := r.Header.scaling()
			if r.Header.Version != w.version || r.Header.LittleEndian != w.little || scaled != w.scaled {
				t.Errorf("version %d little-endian %v scaled %v, want %+v", r.Header.Version, r.Header.LittleEndian, scaled, w)
			}
		})
	}
}
