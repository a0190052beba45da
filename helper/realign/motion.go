package realign

import (
	"bufio"
	"fmt"
	"io"
	"strconv"
)

// Confounds returns the motion parameters as a T×6 matrix (rows = volumes, columns = Names) and
// the framewise displacement: the regressors a denoising step expands (24 parameters: these, their
// temporal derivatives and the squares of both) and the FD it scrubs on.
func (r *Result) Confounds() (motion [][]float64, fd []float64) {
	motion = make([][]float64, len(r.Params))
	for t, p := range r.Params {
		row := make([]float64, 6)
		copy(row, p[:])
		motion[t] = row
	}
	return motion, append([]float64(nil), r.FD...)
}

// WriteTSV writes the motion table in fMRIPrep's confounds format: trans_x … rot_z,
// framewise_displacement, then fMRIPrep's expansions of each parameter P — P_derivative1
// (backward difference), P_power2, P_derivative1_power2 — so that a confounds strategy reading
// fMRIPrep's names (motion 6/12/24, FD scrubbing) reads this table too. One row per volume; "n/a"
// where fMRIPrep writes it (the first row's FD and derivatives).
func (r *Result) WriteTSV(w io.Writer) error {
	bw := bufio.NewWriter(w)
	cols := append([]string{}, Names[:]...)
	cols = append(cols, "framewise_displacement")
	for _, n := range Names {
		cols = append(cols, n+"_derivative1", n+"_power2", n+"_derivative1_power2")
	}
	for i, c := range cols {
		if i > 0 {
			bw.WriteByte('\t')
		}
		bw.WriteString(c)
	}
	bw.WriteByte('\n')
	num := func(v float64) string { return strconv.FormatFloat(v, 'g', 8, 64) }
	for t, p := range r.Params {
		for _, v := range p {
			bw.WriteString(num(v))
			bw.WriteByte('\t')
		}
		if t == 0 {
			bw.WriteString("n/a")
		} else {
			bw.WriteString(num(r.FD[t]))
		}
		for k, v := range p {
			if t == 0 {
				fmt.Fprintf(bw, "\tn/a\t%s\tn/a", num(v*v))
				continue
			}
			d := v - r.Params[t-1][k]
			fmt.Fprintf(bw, "\t%s\t%s\t%s", num(d), num(v*v), num(d*d))
		}
		bw.WriteByte('\n')
	}
	return bw.Flush()
}
