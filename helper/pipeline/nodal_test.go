package pipeline

import (
	"testing"

	"github.com/hubscope/hubscope/ipc/settings"
)

// A cohort analysed from the command line leaves realignment and registration unset, a patient
// analysed from the app sends them off: both are off, so the normative comparison accepts the
// pair; on and off still differ, and keys that leave the nodal maps unchanged are dropped.
func TestNodalSettingsUnsetMotionIsOff(t *testing.T) {
	cli, app := Defaults(), Defaults()
	cli.Realign, cli.Register = "", ""
	app.Realign, app.Register = settings.RealignOff, settings.RealignOff
	a, b := NodalSettings(cli.BundleSettings()), NodalSettings(app.BundleSettings())
	if a["realign"] != settings.RealignOff || b["register"] != settings.RealignOff || a["register"] != b["register"] {
		t.Fatalf("unset %v / %v, off %v / %v", a["realign"], a["register"], b["realign"], b["register"])
	}
	app.Realign = settings.RealignOn
	if NodalSettings(app.BundleSettings())["realign"] != settings.RealignOn {
		t.Fatal("realign on read as off")
	}
	if _, ok := a["backend"]; ok {
		t.Fatal("backend kept in the nodal settings")
	}
}
