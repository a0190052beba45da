package ipc

import (
	"bufio"
	"encoding/binary"
	"encoding/json"
	"fmt"
	"io"
	"math"
)

// VolumeContentType is the media type of a binary volume body.
const VolumeContentType = "application/vnd.hubscope.volume"

// volumeMagic opens every volume body, so that a truncated or foreign body is recognised.
const volumeMagic = "HSVOL1\n\x00"

// MaxVolumeHeader bounds the JSON header of a volume body.
const MaxVolumeHeader = 1 << 20

// VolumeHeader describes a 3D volume: its grid and where the grid lies in the world.
type VolumeHeader struct {
	Name string `json:"name"`
	// Dims are the grid's sizes along i, j, k; the data run i fastest (NIfTI order).
	Dims [3]int `json:"dims"`
	// Affine maps voxel (i, j, k, 1) to world millimetres (sform, else qform), row-major.
	Affine [4][4]float64 `json:"affine"`
	// Min and Max over the finite values inside the mask (for colour scales).
	Min float32 `json:"min"`
	Max float32 `json:"max"`
	// Categorical volumes hold labels (modules, hubs, atlas regions), not quantities.
	Categorical bool `json:"categorical,omitempty"`
	// Seed is the seed voxel of a seed-based connectivity map.
	Seed *[3]int `json:"seed,omitempty"`
	// Millis is how long the helper took to compute the volume (seed maps).
	Millis float64 `json:"millis,omitempty"`
	// Description says in words what the values are ("degree (number of links)", …).
	Description string `json:"description,omitempty"`
}

// Voxels is the number of values a volume with this header holds.
func (h *VolumeHeader) Voxels() int { return h.Dims[0] * h.Dims[1] * h.Dims[2] }

// Volume is a header and its values (float32; NaN marks voxels outside the analysis mask).
type Volume struct {
	Header VolumeHeader
	Data   []float32
}

// At returns the value at grid position (i, j, k), or NaN outside the grid.
func (v *Volume) At(i, j, k int) float32 {
	d := v.Header.Dims
	if i < 0 || j < 0 || k < 0 || i >= d[0] || j >= d[1] || k >= d[2] {
		return float32(math.NaN())
	}
	return v.Data[i+d[0]*(j+d[1]*k)]
}

// maxVoxels bounds a volume's size (a 1 mm whole-head grid is ~7·10⁶ voxels).
const maxVoxels = 1 << 28

func (h *VolumeHeader) check() error {
	for a, n := range h.Dims {
		if n < 1 {
			return fmt.Errorf("volume %q: dimension %d is %d", h.Name, a, n)
		}
	}
	if int64(h.Dims[0])*int64(h.Dims[1])*int64(h.Dims[2]) > maxVoxels {
		return fmt.Errorf("volume %q: %d×%d×%d voxels exceed the limit of %d", h.Name, h.Dims[0], h.Dims[1], h.Dims[2], maxVoxels)
	}
	return nil
}

// WriteVolume writes the wire form of a volume: the 8-byte magic "HSVOL1\n\0", the JSON
// header's length (uint32, little-endian), the JSON header, then Dims[0]·Dims[1]·Dims[2]
// float32 values, little-endian, i fastest.
func WriteVolume(w io.Writer, v *Volume) error {
	if err := v.Header.check(); err != nil {
		return err
	}
	if len(v.Data) != v.Header.Voxels() {
		return fmt.Errorf("volume %q: %d values for %d voxels", v.Header.Name, len(v.Data), v.Header.Voxels())
	}
	hdr, err := json.Marshal(v.Header)
	if err != nil {
		return fmt.Errorf("volume %q: header: %w", v.Header.Name, err)
	}
	bw := bufio.NewWriterSize(w, 1<<16)
	var pre [12]byte
	copy(pre[:], volumeMagic)
	binary.LittleEndian.PutUint32(pre[8:], uint32(len(hdr)))
	bw.Write(pre[:])
	bw.Write(hdr)
	var buf [4096]byte
	for off := 0; off < len(v.Data); {
		n := min(len(v.Data)-off, len(buf)/4)
		for k := 0; k < n; k++ {
			binary.LittleEndian.PutUint32(buf[4*k:], math.Float32bits(v.Data[off+k]))
		}
		if _, err := bw.Write(buf[:4*n]); err != nil {
			return err
		}
		off += n
	}
	return bw.Flush()
}

// ReadVolume reads what WriteVolume wrote, refusing bodies that are truncated, oversized or
// not a volume.
func ReadVolume(r io.Reader) (*Volume, error) {
	var pre [12]byte
	if _, err := io.ReadFull(r, pre[:]); err != nil {
		return nil, fmt.Errorf("volume: truncated preamble: %w", err)
	}
	if string(pre[:8]) != volumeMagic {
		return nil, fmt.Errorf("volume: not a HubScope volume body")
	}
	n := binary.LittleEndian.Uint32(pre[8:])
	if n > MaxVolumeHeader {
		return nil, fmt.Errorf("volume: header of %d bytes exceeds %d", n, MaxVolumeHeader)
	}
	hdr := make([]byte, n)
	if _, err := io.ReadFull(r, hdr); err != nil {
		return nil, fmt.Errorf("volume: truncated header: %w", err)
	}
	v := &Volume{}
	if err := json.Unmarshal(hdr, &v.Header); err != nil {
		return nil, fmt.Errorf("volume: header: %w", err)
	}
	if err := v.Header.check(); err != nil {
		return nil, err
	}
	// The slice grows with the values that arrive, so a 12-byte body whose header claims
	// 2^28 voxels fails as truncated instead of costing 1 GiB first.
	nv := v.Header.Voxels()
	v.Data = make([]float32, 0, min(nv, 1<<20))
	br := bufio.NewReaderSize(r, 1<<16)
	var buf [4096]byte
	for off := 0; off < nv; {
		m := min(nv-off, len(buf)/4)
		if _, err := io.ReadFull(br, buf[:4*m]); err != nil {
			return nil, fmt.Errorf("volume %q: truncated data after %d of %d values: %w", v.Header.Name, off, nv, err)
		}
		for k := 0; k < m; k++ {
			v.Data = append(v.Data, math.Float32frombits(binary.LittleEndian.Uint32(buf[4*k:])))
		}
		off += m
	}
	return v, nil
}
