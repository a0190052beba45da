//go:build !js

package app

import (
	"context"
	"encoding/json"
	"path/filepath"
	"testing"
	"time"

	"fyne.io/fyne/v2"
	"fyne.io/fyne/v2/test"
	"fyne.io/fyne/v2/widget"

	"github.com/hubscope/hubscope/helper/daemon"
	"github.com/hubscope/hubscope/helper/synth"
	"github.com/hubscope/hubscope/ipc"
	"github.com/hubscope/hubscope/ipc/schema"
	"github.com/hubscope/hubscope/ipc/settings"
)

// TestConnectomeOfDaemonRegionJob runs a region (ROI-to-ROI) network job in the helper daemon,
// as the settings panel's "Network nodes: atlas regions (AAL)" submits it, and opens its bundle
// as the 3D view does: one sphere per region of the network and every link of network.edge.
func TestConnectomeOfDaemonRegionJob(t *testing.T) {
	dir := t.TempDir()
	m, a, err := synth.DemoMask()
	if err != nil {
		t.Fatal(err)
	}
	m, a = synth.ResampleMask(m, a, 12)
	scanPath := filepath.Join(dir, "phantom.nii.gz")
	ctx, cancel := context.WithTimeout(ipc.ContextWithTransport(context.Background(), ipc.TransportUnix), 5*time.Minute)
	defer cancel()
	if _, err := synth.Write(ctx, m, a, synth.DefaultParams(), scanPath, nil); err != nil {
		t.Fatal(err)
	}
	maskPath, _ := synth.TruthPaths(scanPath)
	d, err := daemon.New(daemon.Options{ResultsDir: filepath.Join(dir, "results"), Backend: settings.BackendCPU})
	if err != nil {
		t.Fatal(err)
	}
	defer d.Close(context.Background())

	f := NewSettingsForm()
	f.Nodes.SetSelected(nodeChoices[1].Label) // atlas regions (AAL)
	set, err := f.Settings()
	if err != nil {
		t.Fatal(err)
	}
	set.Metrics = settings.MetricsBasic // the network and its modules are what the view draws
	job, err := d.Submit(ctx, ipc.JobRequest{Scan: scanPath, Mask: maskPath, Settings: &set})
	if err != nil {
		t.Fatal(err)
	}
	ch, err := d.Events(ctx, job.ID)
	if err != nil {
		t.Fatal(err)
	}
	var last ipc.Event
	for ev := range ch {
		last = ev
	}
	if last.Job.State != ipc.JobDone {
		t.Fatalf("job ended %s: %s", last.Job.State, last.Job.Error)
	}
	sum, err := d.Summary(ctx, job.ID)
	if err != nil {
		t.Fatal(err)
	}
	var met schema.Metrics
	if err := json.Unmarshal(sum.Metrics, &met); err != nil {
		t.Fatal(err)
	}
	c, err := LoadConnectome(ctx, d, sum, nil)
	if err != nil {
		t.Fatal(err)
	}
	if c == nil || len(c.Spheres) != met.Scan.Nodes || int64(c.Links()) != met.Network.Edges || c.Links() == 0 {
		t.Fatalf("connectome of the region job: %+v; the network has %d nodes and %d edges", c, met.Scan.Nodes, met.Network.Edges)
	}
	// The whole result, as the app opens it: the 3D tab shows the region network's links.
	test.NewTempApp(t)
	r := openShown(t, d, sum, 1100, 700)
	defer fyne.DoAndWait(r.close)
	<-r.Ready3D
	var drawn, spheres int
	var shown string
	fyne.DoAndWait(func() {
		if r.View3D != nil {
			drawn, spheres = len(r.View3D.Scene().Edges), len(r.View3D.Scene().Spheres)
		} else if l, ok := r.tab3D.Objects[0].(*widget.Label); ok {
			shown = l.Text
		}
	})
	if r.View3D == nil || r.Links == nil || drawn == 0 || spheres < met.Scan.Nodes {
		t.Fatalf("3D tab of the region job: view %v, %d links drawn, %d spheres (%q)", r.View3D != nil, drawn, spheres, shown)
	}
	<-r.SlicesReady
	hubs := 0
	for _, sp := range c.Spheres {
		if sp.ID >= 0 {
			hubs++
		}
	}
	if hubs != len(sum.Hubs) {
		t.Fatalf("%d selectable spheres, %d hubs", hubs, len(sum.Hubs))
	}
}
