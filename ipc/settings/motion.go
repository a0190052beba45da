package settings

// Head-motion realignment modes (Motion.Realign, --realign; helper/realign).
const (
	RealignOff  = "off"  // the series as given
	RealignOn   = "on"   // always realign a 4D image
	RealignAuto = "auto" // realign a raw scan: no confounds table given or beside it, not fMRIPrep's output
)

// RealignModes are the choices, in the order help texts list them.
var RealignModes = []string{RealignOff, RealignOn, RealignAuto}

// Motion is head-motion correction of a raw scan before the analysis.
type Motion struct {
	// Realign is off ("" is off too), on or auto.
	Realign string `json:"realign,omitempty"`
}

func (g *Motion) fields() []Field {
	return []Field{{"realign", "realign", "MODE", "head-motion realignment before the analysis: off (default), on, or auto (a raw scan: no confounds table, not fMRIPrep output); writes qc/motion.tsv, qc/motion.png, qc/motion.json", &g.Realign}}
}

func (g *Motion) defaults() {}

func (g *Motion) validate(s *Settings) error {
	if g.Realign == "" {
		return nil
	}
	return s.oneOf("realign", "realignment mode", g.Realign, RealignModes)
}
