// Command hubscope is the HubScope desktop application: drop a resting-state fMRI scan on the
// window to build its voxel-wise functional network and inspect its hubs and modules. The
// analysis runs in the helper (hubscope-helper serve), which the app starts when none answers.
// The same program builds for the browser (GOOS=js GOARCH=wasm), where it talks to a helper
// started with --web through the token in the page's address.
package main

import (
	"context"

	"fyne.io/fyne/v2"
	fyneapp "fyne.io/fyne/v2/app"

	"github.com/hubscope/hubscope/app"
	"github.com/hubscope/hubscope/app/compareview"
	"github.com/hubscope/hubscope/assets"
	"github.com/hubscope/hubscope/ipc"
	"github.com/hubscope/hubscope/ipc/schema"
)

// run opens the window; setup (per platform) fills in how to reach the helper and what to do
// once the window exists.
func run(cfg config) {
	a := fyneapp.NewWithID("org.hubscope.app")
	a.SetIcon(fyne.NewStaticResource("icon.png", assets.Icon))
	w := a.NewWindow(schema.AppName + " " + schema.Version)
	ctx := context.Background()
	opts := app.Options{Connect: cfg.connect, Window: w, OnResult: cfg.onResult, OnComparison: cfg.onComparison}
	u := app.New(ctx, opts)
	w.SetContent(u.Content())
	w.SetOnDropped(u.Dropped)
	w.Resize(fyne.NewSize(1280, 800))
	if cfg.started != nil {
		cfg.started(u, w)
	}
	u.Start()
	w.ShowAndRun()
}

// config is what the platform's main sets up.
type config struct {
	connect  func(ctx context.Context) (ipc.Service, error)
	onResult func(*app.Result)
	started  func(*app.UI, fyne.Window)
	// onComparison is called when a comparison's t-maps are shown (the smoke dump).
	onComparison func(*compareview.View, error)
}
