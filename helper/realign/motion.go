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

// WriteTSV writes the motion table in fMRIPrep's confounds format: a header trans_x … rot_z
// framewise_displacement, one row per volume, FD "n/a" in the first row.
func (r *Result) WriteTSV(w io.Writer) error {
	bw := bufio.NewWriter(w)
	for _, n := range Names {
		bw.WriteString(n)
		bw.WriteByte('\t')
	}
	bw.WriteString("framewise_displacement\n")
	for t, p := range r.Params {
		for _, v := range p {
			bw.WriteString(strconv.FormatFloat(v, 'g', 8, 64))
			bw.WriteByte('\t')
		}
		if t == 0 {
			bw.WriteString("n/a\n")
		} else {
			fmt.Fprintf(bw, "%s\n", strconv.FormatFloat(r.FD[t], 'g', 8, 64))
		}
	}
	return bw.Flush()
}
