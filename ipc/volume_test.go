package ipc

import (
	"bytes"
	"math"
	"strings"
	"testing"
)

func TestVolumeRoundTrip(t *testing.T) {
	v := &Volume{Header: VolumeHeader{Name: "degree", Dims: [3]int{3, 2, 2}, Min: 0, Max: 11,
		Affine: [4][4]float64{{-2, 0, 0, 90}, {0, 2, 0, -126}, {0, 0, 2, -72}, {0, 0, 0, 1}}, Seed: &[3]int{1, 0, 1}}}
	for i := 0; i < 12; i++ {
		v.Data = append(v.Data, float32(i))
	}
	v.Data[5] = float32(math.NaN())
	var b bytes.Buffer
	if err := WriteVolume(&b, v); err != nil {
		t.Fatal(err)
	}
	got, err := ReadVolume(bytes.NewReader(b.Bytes()))
	if err != nil {
		t.Fatal(err)
	}
	if got.Header.Dims != v.Header.Dims || got.Header.Affine != v.Header.Affine || *got.Header.Seed != *v.Header.Seed {
		t.Fatalf("header %+v, want %+v", got.Header, v.Header)
	}
	for i := range v.Data {
		if math.Float32bits(got.Data[i]) != math.Float32bits(v.Data[i]) {
			t.Fatalf("value %d: %v, want %v", i, got.Data[i], v.Data[i])
		}
	}
	if got.At(2, 1, 1) != 11 || got.At(1, 0, 1) != 7 || !math.IsNaN(float64(got.At(3, 0, 0))) {
		t.Fatalf("At: %v %v %v", got.At(2, 1, 1), got.At(1, 0, 1), got.At(3, 0, 0))
	}
	// Every truncation is refused, never read as a shorter volume.
	for _, n := range []int{0, 5, 11, 20, b.Len() - 1} {
		if _, err := ReadVolume(bytes.NewReader(b.Bytes()[:n])); err == nil {
			t.Errorf("truncated at %d bytes: read without error", n)
		}
	}
}

func TestVolumeRefusesBadInput(t *testing.T) {
	if err := WriteVolume(&bytes.Buffer{}, &Volume{Header: VolumeHeader{Name: "x", Dims: [3]int{2, 2, 2}}, Data: make([]float32, 7)}); err == nil {
		t.Error("7 values for 8 voxels written")
	}
	if err := WriteVolume(&bytes.Buffer{}, &Volume{Header: VolumeHeader{Name: "x", Dims: [3]int{0, 2, 2}}}); err == nil {
		t.Error("zero dimension written")
	}
	// A header claiming a huge grid must fail before allocating it.
	huge := []byte("HSVOL1\n\x00")
	hdr := `{"name":"x","dims":[100000,100000,100000]}`
	huge = append(huge, byte(len(hdr)), 0, 0, 0)
	huge = append(huge, hdr...)
	if _, err := ReadVolume(bytes.NewReader(huge)); err == nil || !strings.Contains(err.Error(), "exceed") {
		t.Errorf("huge grid: %v", err)
	}
	if _, err := ReadVolume(strings.NewReader("GIF89a......")); err == nil {
		t.Error("foreign body read as a volume")
	}
	big := []byte("HSVOL1\n\x00\xff\xff\xff\x7f")
	if _, err := ReadVolume(bytes.NewReader(big)); err == nil {
		t.Error("2 GB header length accepted")
	}
}

func TestErrorCodes(t *testing.T) {
	e := Errorf(CodeNotFound, "job %s: no such job", "j1")
	if e.Status != 404 || e.Message != "job j1: no such job" || !IsCode(e, CodeNotFound) {
		t.Fatalf("%+v", e)
	}
	if u := Errorf("nonsense", "x"); u.Status != 500 || u.Code != CodeInternal {
		t.Fatalf("unknown code: %+v", u)
	}
	for _, s := range []JobState{JobDone, JobFailed, JobCancelled, JobInterrupted} {
		if !s.Terminal() {
			t.Errorf("%s not terminal", s)
		}
	}
	if JobRunning.Terminal() || JobQueued.Terminal() {
		t.Error("live state terminal")
	}
}
