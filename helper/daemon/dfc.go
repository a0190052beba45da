package daemon

import (
	"github.com/hubscope/hubscope/helper/pipeline"
)

// setDFC asks the pipeline for sliding windows of window volumes every step volumes; step 0
// with a window takes the command line's default, 1 volume. pipeline.Config.Validate then
// checks both (its messages name dfc_window and dfc_step).
func setDFC(cfg *pipeline.Config, window, step int) {
	cfg.DFCWindow, cfg.DFCStep = window, step
	if window > 0 && step == 0 {
		cfg.DFCStep = 1
	}
}
