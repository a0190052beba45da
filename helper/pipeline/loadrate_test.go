package pipeline

import (
	"testing"

	"github.com/hubscope/hubscope/helper/scan"
)

// TestLoadRate: the load note divides the data decoded by the load's own time, and gives no
// figure for a load timed under a millisecond (a 72 MB load over a microsecond would read
// 72,061,920 MB/s, the figure once seen in a summary) or without data read.
func TestLoadRate(t *testing.T) {
	s := &scan.Scan{N: 530, L: 1452, BytesRead: 72_061_920}
	for _, c := range []struct {
		secs float64
		want string
	}{
		{2, "loaded 530 nodes × 1452 time points (36 MB/s)"},
		{0.5e-3, ""},
		{1e-6, ""},
		{0, ""},
	} {
		if got := loadRate(s, c.secs); got != c.want {
			t.Errorf("%g s: %q, want %q", c.secs, got, c.want)
		}
	}
	if got := loadRate(&scan.Scan{N: 2, L: 3}, 1); got != "" {
		t.Errorf("nothing read: %q, want no note", got)
	}
}
