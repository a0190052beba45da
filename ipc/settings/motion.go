package settings

// Head-motion realignment modes (Motion.Realign, --realign; helper/realign).
const (
	RealignOff  = "off"  // the series as given
	RealignOn   = "on"   // always realign a 4D image
	RealignAuto = "auto" // realign a raw scan: no confounds table given or beside it, not fMRIPrep's output
)

// RealignModes are the choices, in the order help texts list them.
var RealignModes = []string{RealignOff, RealignOn, RealignAuto}

// Motion is head-motion correction of a raw scan before the analysis, and its registration to
// MNI space.
type Motion struct {
	// Realign is off ("" is off too), on or auto.
	Realign string `json:"realign,omitempty"`
	// Register is off ("" is off too), on or auto (the same modes as Realign): a 12-parameter
	// affine of the scan's mean EPI to the MNI152 template (helper/register), which the hubs'
	// atlas labels then use; a scan already in MNI space is never registered.
	Register string `json:"register,omitempty"`
}

func (g *Motion) fields() []Field {
	return []Field{
		{"realign", "realign", "MODE", "head-motion realignment before the analysis: off (default), on, or auto (a raw scan — no confounds table, not fMRIPrep output — that moved more than a tenth of a voxel); writes qc/motion.tsv, qc/motion.png, qc/motion.json", &g.Realign},
		{"register", "register", "MODE", "affine registration of the mean EPI to the MNI152 template for the hubs' atlas labels: off (default), on, or auto (a scan not in MNI space); writes qc/registration.json", &g.Register},
	}
}

func (g *Motion) defaults() {}

func (g *Motion) validate(s *Settings) error {
	if g.Realign != "" {
		if err := s.oneOf("realign", "realignment mode", g.Realign, RealignModes); err != nil {
			return err
		}
	}
	if g.Register != "" {
		return s.oneOf("register", "registration mode", g.Register, RealignModes)
	}
	return nil
}
