package daemon

import (
	"errors"

	"github.com/hubscope/hubscope/helper/pipeline"
)

// setDFC asks the pipeline for sliding-window analysis.
func setDFC(cfg *pipeline.Config, window, step int) error {
	return errors.New("dynamic connectivity is not available in this helper yet")
}
