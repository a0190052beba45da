package render

import (
	"image"
	"image/color"
	"image/png"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestSavePNG(t *testing.T) {
	img := image.NewRGBA(image.Rect(0, 0, 3, 2))
	img.SetRGBA(1, 1, color.RGBA{R: 10, G: 20, B: 30, A: 255})
	path := filepath.Join(t.TempDir(), "view.png")
	if err := SavePNG(path, img); err != nil {
		t.Fatal(err)
	}
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	back, err := png.Decode(f)
	if err != nil {
		t.Fatal(err)
	}
	if r, g, b, a := back.At(1, 1).RGBA(); r>>8 != 10 || g>>8 != 20 || b>>8 != 30 || a>>8 != 255 {
		t.Fatalf("pixel (1,1) read back as %d %d %d %d", r>>8, g>>8, b>>8, a>>8)
	}
	entries, _ := os.ReadDir(filepath.Dir(path))
	if len(entries) != 1 {
		t.Fatalf("directory holds %d files after saving, want just the PNG", len(entries))
	}
	bad := filepath.Join(t.TempDir(), "missing", "view.png")
	if err := SavePNG(bad, img); err == nil || !strings.Contains(err.Error(), bad) {
		t.Fatalf("saving into a missing directory: error %v, want one naming %s", err, bad)
	}
}
