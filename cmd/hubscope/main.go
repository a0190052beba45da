// Command hubscope is the HubScope desktop application: drop a resting-state fMRI scan on the
// window to build its voxel-wise functional network and inspect its hubs and modules.
package main

import (
	"fyne.io/fyne/v2"
	fyneapp "fyne.io/fyne/v2/app"

	"github.com/hubscope/hubscope/app"
	"github.com/hubscope/hubscope/assets"
	"github.com/hubscope/hubscope/ipc"
)

func main() {
	a := fyneapp.NewWithID("org.hubscope.app")
	a.SetIcon(fyne.NewStaticResource("icon.png", assets.Icon))
	w := a.NewWindow(ipc.AppName + " " + ipc.Version)
	u := app.New()
	w.SetContent(u.Content())
	w.SetOnDropped(u.Dropped)
	w.Resize(fyne.NewSize(900, 600))
	w.ShowAndRun()
}
