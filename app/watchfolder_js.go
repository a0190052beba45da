//go:build js

package app

import "fyne.io/fyne/v2"

// folderWatch is absent in the browser: a web page cannot watch a folder.
type folderWatch struct{}

func newFolderWatch(*UI) *folderWatch          { return &folderWatch{} }
func (*folderWatch) button() fyne.CanvasObject { return nil }
func (*folderWatch) status() fyne.CanvasObject { return nil }
