package pipeline

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/hubscope/hubscope/helper/bundle"
	"github.com/hubscope/hubscope/helper/nifti"
	"github.com/hubscope/hubscope/helper/progress"
	"github.com/hubscope/hubscope/helper/realign"
	"github.com/hubscope/hubscope/helper/register"
	"github.com/hubscope/hubscope/helper/scan"
	"github.com/hubscope/hubscope/ipc/schema"
)

// RegistrationReport is qc/registration.json (schema.Registration): whether and how the scan
// was put in MNI space.
type RegistrationReport = schema.Registration

func registerWanted(cfg Config) bool {
	return cfg.Register == RealignOn || cfg.Register == RealignAuto
}

// alreadyMNI says why a scan needs no registration: its sform (or qform) code is MNI152 (4), or
// its name is fMRIPrep's space-MNI152*.
func alreadyMNI(path string) (string, bool) {
	if strings.Contains(strings.ToLower(path), "space-mni152") {
		return "fMRIPrep's space-MNI152 output is in MNI space already", true
	}
	r, err := nifti.Open(path)
	if err != nil {
		return "", false
	}
	defer r.Close()
	h := r.Header
	if h.SformCode == nifti.XformMNI152 || (h.SformCode == 0 && h.QformCode == nifti.XformMNI152) {
		return "the header's transform code says MNI152 already", true
	}
	return "", false
}

// registerScan registers the scan's mean EPI (its mask's voxels) to the embedded MNI152 template
// and writes qc/registration.json. It returns the scan→MNI affine the hub labels use, or nil
// (not asked, already MNI, or refused as implausible: the network stands, the labels do not).
func registerScan(ctx context.Context, cfg Config, s *scan.Scan, w *bundle.Writer, rep progress.Reporter) (*realign.Affine, error) {
	if !registerWanted(cfg) || s.IJK == nil {
		return nil, nil
	}
	rr := &RegistrationReport{}
	if why, ok := alreadyMNI(cfg.Scan); ok {
		rr.Reason = why + ": nothing estimated"
		rep.Note("registration to MNI: " + rr.Reason)
		return nil, w.WriteJSON(schema.RegistrationFile, rr)
	}
	if s.Mean == nil {
		return nil, fmt.Errorf("%s: registration needs the mean image", cfg.Scan)
	}
	epi := register.Image{Dims: s.Dims, Affine: s.Affine, Data: make([]float32, len(s.Mean))}
	for f, in := range s.Mask.In {
		if in {
			epi.Data[f] = s.Mean[f]
		}
	}
	tpl, err := register.Template()
	if err != nil {
		return nil, err
	}
	t0 := time.Now()
	res, err := register.ToMNI(ctx, epi, tpl)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", cfg.Scan, err)
	}
	rr.Estimated, rr.Seconds, rr.Result = true, time.Since(t0).Seconds(), res
	if !res.Plausible {
		rr.Reason = "estimated; " + res.Problem + ": atlas labels refused, the network is kept"
		rep.Note(fmt.Sprintf("registration to MNI: %s", rr.Reason))
		return nil, w.WriteJSON(schema.RegistrationFile, rr)
	}
	rr.Reason, rr.LabelsUseIt = "estimated (--register "+cfg.Register+")", true
	rep.Note(fmt.Sprintf("registration to MNI: zooms %.2f × %.2f × %.2f, shear %.2f, MI %.3f in %.1f s (qc/registration.json)",
		res.Zooms[0], res.Zooms[1], res.Zooms[2], res.Shear, res.MI, rr.Seconds))
	to := res.ToMNI
	return &to, w.WriteJSON(schema.RegistrationFile, rr)
}
