package daemon

import (
	"context"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/hubscope/hubscope/assets"
	"github.com/hubscope/hubscope/helper/atlas"
	"github.com/hubscope/hubscope/helper/nifti"
	"github.com/hubscope/hubscope/ipc"
	"github.com/hubscope/hubscope/ipc/schema"
	"github.com/hubscope/hubscope/ipc/settings"
)

// TestRegionNetworkJob submits the MNI phantom with nodes = regions and the embedded AAL: the
// job builds the ROI-to-ROI network, whose nodes are the AAL regions with a voxel inside the
// mask (counted here from the atlas resampled to the scan's grid), and the bundle holds BrainNet
// Viewer's network.edge. An atlas file is refused over the web transport, and bad node settings
// are refused naming the setting.
func TestRegionNetworkJob(t *testing.T) {
	scanPath, maskPath := phantom(t, 12)
	d := newDaemon(t, filepath.Join(t.TempDir(), "results"))

	// Refusals first: nothing is run.
	for _, c := range []struct{ js, want string }{
		{`{"nodes": "regions"}`, "settings: nodes: regions needs an atlas"},
		{`{"nodes": "rois", "atlas": "aal"}`, "settings: nodes: unknown kind of nodes \"rois\""},
		{`{"atlas_names": "/etc/hostname"}`, "settings: atlas_names: "},
		{`{"nodes": "regions", "atlas": "aal.nii.gz"}`, "settings: atlas \"aal.nii.gz\": give an absolute path"},
		{`{"nodes": "regions", "atlas": "/no/such/atlas.nii.gz"}`, "settings: atlas /no/such/atlas.nii.gz: "},
	} {
		set := new(settings.Settings)
		if err := json.Unmarshal([]byte(c.js), set); err != nil {
			t.Fatal(err)
		}
		if _, err := d.Submit(unix, ipc.JobRequest{Scan: scanPath, Mask: maskPath, Settings: set}); !ipc.IsCode(err, ipc.CodeBadRequest) || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: %v, want %q", c.js, err, c.want)
		}
	}
	web := ipc.ContextWithTransport(context.Background(), ipc.TransportWeb)
	for _, js := range []string{`{"nodes": "regions", "atlas": "` + maskPath + `"}`, `{"atlas": "/etc/hostname"}`} {
		if _, err := d.Submit(web, ipc.JobRequest{ScanUpload: "u1", Settings: settingsOf(js)}); !ipc.IsCode(err, ipc.CodeForbidden) || !strings.Contains(err.Error(), "settings' atlas") {
			t.Errorf("web %s: %v, want forbidden naming the atlas", js, err)
		}
	}

	job, err := d.Submit(unix, ipc.JobRequest{Scan: scanPath, Mask: maskPath,
		Settings: settingsOf(`{"metrics": "basic", "nodes": "regions", "atlas": "AAL"}`)})
	if err != nil {
		t.Fatal(err)
	}
	if job.Settings.Nodes != settings.NodesRegions || job.Settings.Atlas != "AAL" {
		t.Fatalf("job settings: nodes %q, atlas %q", job.Settings.Nodes, job.Settings.Atlas)
	}
	if evs := follow(t, d, job.ID); evs[len(evs)-1].Job.State != ipc.JobDone {
		t.Fatalf("job ended %s: %s", evs[len(evs)-1].Job.State, evs[len(evs)-1].Job.Error)
	}
	sum, err := d.Summary(unix, job.ID)
	if err != nil {
		t.Fatal(err)
	}

	// The AAL regions with a voxel inside the mask, nearest neighbour on the scan's grid.
	h, mask, err := nifti.ReadImage(maskPath)
	if err != nil {
		t.Fatal(err)
	}
	aal, err := atlas.LoadFS(assets.Atlas, assets.AtlasImage, assets.AtlasNames)
	if err != nil {
		t.Fatal(err)
	}
	lab, err := aal.ResampleLikeNilearn([3]int{h.Nx(), h.Ny(), h.Nz()}, h.Affine())
	if err != nil {
		t.Fatal(err)
	}
	inside := map[int]bool{}
	for f, m := range mask {
		if m != 0 && lab[f] != 0 {
			inside[int(lab[f])] = true
		}
	}
	var m schema.Metrics
	if err := json.Unmarshal(sum.Metrics, &m); err != nil {
		t.Fatal(err)
	}
	if len(inside) < 10 || m.Scan.Nodes != len(inside) {
		t.Fatalf("region network of %d nodes; %d AAL regions lie inside the mask", m.Scan.Nodes, len(inside))
	}
	edge, err := os.ReadFile(filepath.Join(sum.Bundle, "network.edge"))
	if err != nil {
		t.Fatal(err)
	}
	rows := strings.Split(strings.TrimSpace(string(edge)), "\n")
	if len(rows) != len(inside) || len(strings.Fields(rows[0])) != len(inside) {
		t.Fatalf("network.edge: %d rows of %d values, want %d × %d", len(rows), len(strings.Fields(rows[0])), len(inside), len(inside))
	}
	t.Logf("%d AAL regions inside the mask; %d hubs", len(inside), len(sum.Hubs))
	if !slices.ContainsFunc(sum.Files, func(f ipc.FileInfo) bool { return f.Name == "network.edge" }) {
		t.Fatalf("files %v lack network.edge", sum.Files)
	}
}

// TestRegionSettingErrors: the node settings' problems are *settings.SettingError naming the
// setting, as every other setting's.
func TestRegionSettingErrors(t *testing.T) {
	for _, c := range []struct {
		js, key string
	}{
		{`{"nodes": "regions"}`, "nodes"},
		{`{"nodes": "parcels", "atlas": "aal"}`, "nodes"},
		{`{"atlas_names": "/x/names.tsv"}`, "atlas_names"},
	} {
		set := settingsOf(c.js)
		var se *settings.SettingError
		if err := set.Validate(); !errors.As(err, &se) || se.Key != c.key {
			t.Errorf("%s: %v, want a SettingError for %s", c.js, err, c.key)
		}
	}
}
