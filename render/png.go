package render

import (
	"fmt"
	"image"
	"image/png"
	"os"
	"path/filepath"
)

// SavePNG writes img to path as PNG. It writes to a temporary file in the same directory and
// renames it, so a failed save never leaves a truncated image under path.
func SavePNG(path string, img image.Image) error {
	if img == nil {
		return fmt.Errorf("save %s: no image", path)
	}
	tmp, err := os.CreateTemp(filepath.Dir(path), "."+filepath.Base(path)+".*.tmp")
	if err != nil {
		return fmt.Errorf("save %s: %w", path, err)
	}
	// CreateTemp makes the file private; an exported figure is an ordinary document.
	if err := tmp.Chmod(0o644); err != nil {
		tmp.Close()
		os.Remove(tmp.Name())
		return fmt.Errorf("save %s: %w", path, err)
	}
	if err := png.Encode(tmp, img); err != nil {
		tmp.Close()
		os.Remove(tmp.Name())
		return fmt.Errorf("save %s: encode PNG: %w", path, err)
	}
	if err := tmp.Close(); err != nil {
		os.Remove(tmp.Name())
		return fmt.Errorf("save %s: %w", path, err)
	}
	if err := os.Rename(tmp.Name(), path); err != nil {
		os.Remove(tmp.Name())
		return fmt.Errorf("save %s: %w", path, err)
	}
	return nil
}
