//go:build !js

package app

import (
	"io"

	"fyne.io/fyne/v2"
)

// saveFile is nil where the app has a save dialog (see save_js.go).
var saveFile func(name string, write func(io.Writer) error) (string, error)

// downloads is nil where the app saves files itself (see save_js.go).
func (r *Result) downloads() fyne.CanvasObject { return nil }
