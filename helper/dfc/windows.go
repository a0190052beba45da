// Package dfc computes dynamic functional connectivity by sliding windows (docs/algorithms.md, "Dynamic connectivity",
// Eslami & Saeed's GPU-DFC): windows of w volumes every s volumes, k = ⌊(T − w)/s⌋ + 1 of them,
// each normalised on its own and thresholded into a sparse network through the same fc
// driver and Backend as the static network. Per window it reports the degree of every node and
// global measures that stay cheap at voxel scale; across windows, the nodal variability of
// degree. It also implements HubScope's exact low-rank storage of a window's correlation
// matrix (thin SVD through the w×w Gram matrix) beside GPU-DFC's randomized range finder.
package dfc

import "fmt"

// MinWindow is the shortest window: a correlation of fewer than 3 points is ±1 or undefined
// (and fc.CheckSeries refuses L < 3).
const MinWindow = 3

// Plan is the window layout for a series of T volumes: window k covers volumes
// [Starts[k], Starts[k]+Window).
type Plan struct {
	T, Window, Step int
	Starts          []int
}

// Count is the number of windows k.
func (p Plan) Count() int { return len(p.Starts) }

// NewPlan lays out windows of w volumes every s volumes over T volumes: k = ⌊(T − w)/s⌋ + 1
// windows (GPU-DFC eq. 3; the floor drops trailing volumes that do not fill a window) starting
// at 0, s, 2s, …. It refuses w < 3, w > T and s < 1, naming the setting.
func NewPlan(t, w, s int) (Plan, error) {
	if err := CheckSettings(w, s); err != nil {
		return Plan{}, err
	}
	if w > t {
		return Plan{}, fmt.Errorf("dfc: window %d volumes is longer than the scan's %d volumes", w, t)
	}
	k := (t-w)/s + 1
	p := Plan{T: t, Window: w, Step: s, Starts: make([]int, k)}
	for i := range p.Starts {
		p.Starts[i] = i * s
	}
	return p, nil
}

// CheckSettings validates a window and step before the scan's length is known.
func CheckSettings(w, s int) error {
	if w < MinWindow {
		return fmt.Errorf("dfc: window %d volumes: want at least %d", w, MinWindow)
	}
	if s < 1 {
		return fmt.Errorf("dfc: step %d volumes: want at least 1", s)
	}
	return nil
}
