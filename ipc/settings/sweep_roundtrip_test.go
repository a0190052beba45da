package settings

import (
	"encoding/json"
	"testing"
)

// Settings with a sweep, once resolved, decode again: a job's settings as the helper echoes
// them in its events and job list (the app's follower failed on "give the sweep or density,
// not both" and never opened the result of a sweep).
func TestSweepSettingsRoundTrip(t *testing.T) {
	var s Settings
	if err := json.Unmarshal([]byte(`{"sweep": "r=0.3:0.6:0.1", "metrics": "basic"}`), &s); err != nil {
		t.Fatal(err)
	}
	if s.Sweep != "r=0.3:0.6:0.1" || s.Density != 0 || s.R != 0 {
		t.Fatalf("resolved %+v", s.Network)
	}
	if err := s.Validate(); err != nil {
		t.Fatal(err)
	}
	b, err := json.Marshal(&s)
	if err != nil {
		t.Fatal(err)
	}
	var again Settings
	if err := json.Unmarshal(b, &again); err != nil {
		t.Fatalf("echoed settings %s: %v", b, err)
	}
	if again.Sweep != s.Sweep || again.Mode != s.Mode {
		t.Fatalf("echo %+v, want %+v", again.Network, s.Network)
	}
	// A threshold given with the sweep is still refused.
	if err := json.Unmarshal([]byte(`{"sweep": "r=0.3:0.6:0.1", "r": 0.4}`), &again); err == nil {
		t.Fatal("a sweep with r accepted")
	}
}
