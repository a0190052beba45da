package synth

import (
	"bufio"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/hubscope/hubscope/helper/internal/owned"
	"github.com/hubscope/hubscope/helper/nifti"
	"github.com/hubscope/hubscope/helper/progress"
	"github.com/hubscope/hubscope/helper/scan"
)

// TruthPaths returns the ground-truth files Write puts beside out: <base>_truth_modules.nii.gz
// and <base>_truth_hubs.tsv, where base is out without its .nii or .nii.gz extension.
func TruthPaths(out string) (modules, hubs string) {
	base := out
	for _, ext := range []string{".nii.gz", ".nii"} {
		if strings.HasSuffix(strings.ToLower(base), ext) {
			base = base[:len(base)-len(ext)]
			break
		}
	}
	return base + "_truth_modules.nii.gz", base + "_truth_hubs.tsv"
}

// Write generates the phantom volume by volume and streams it to out (NIfTI-1, gzip when out ends
// in .gz) in p.DataType, so memory stays O(N) whatever the length: one grid volume, the mask and
// the per-voxel AR(1) state. The series equal Generate's up to the datatype's rounding (int16:
// ±0.5, i.e. ±0.05 % of the baseline).
//
// Beside out it writes the ground truth (see TruthPaths): the module label map (int16, 0 outside
// the mask, 1..M inside) and a tab-separated hub table with columns node, i, j, k, x, y, z
// (world mm) and modules (comma-separated). Progress is one unit per volume; ctx is checked
// before each volume, and on cancellation or any error no output file is left behind.
func Write(ctx context.Context, mask scan.Mask, affine [4][4]float64, p Params, out string, rep progress.Reporter) (*Truth, error) {
	rep = progress.OrDiscard(rep)
	g, w, err := create(mask, affine, p, out)
	if err != nil {
		return nil, err
	}
	vals := make([]float64, len(g.nodes))
	err = writeVolumes(ctx, w, out, p.Length, len(mask.In), rep, func(t int, vol []float32) {
		g.next(vals)
		for v, f := range g.nodes {
			vol[f] = float32(vals[v])
		}
	})
	if err != nil {
		return nil, err
	}
	modPath, hubPath := TruthPaths(out)
	if err := writeTruth(g, mask, affine, modPath, hubPath); err != nil {
		os.Remove(out)
		return nil, err
	}
	rep.Note(fmt.Sprintf("phantom %s: %d voxels, %d modules, %d hubs, %d volumes; truth in %s and %s",
		filepath.Base(out), len(g.nodes), p.Modules, len(g.truth.Hubs), p.Length, filepath.Base(modPath), filepath.Base(hubPath)))
	return g.truth, nil
}

// checkOut refuses an output name that is not a NIfTI file's.
func checkOut(out string) error {
	if !strings.HasSuffix(strings.ToLower(out), ".nii") && !strings.HasSuffix(strings.ToLower(out), ".nii.gz") {
		return fmt.Errorf("synth: output %s: name must end in .nii or .nii.gz", out)
	}
	return nil
}

// create checks the output's name, plants the phantom's signals in mask's voxels and opens the
// 4D image out on mask's grid for writing.
func create(mask scan.Mask, affine [4][4]float64, p Params, out string) (*generator, *nifti.Writer, error) {
	if err := checkOut(out); err != nil {
		return nil, nil, err
	}
	g, err := newGenerator(mask, affine, p)
	if err != nil {
		return nil, nil, err
	}
	d := mask.Dims
	w, err := nifti.Create(out, nifti.NewHeader([]int{d[0], d[1], d[2], p.Length}, p.DataType, affine, p.TR))
	if err != nil {
		return nil, nil, err
	}
	return g, w, nil
}

// writeVolumes writes n volumes of size voxels into w, volume t filled by fill (the buffer is
// reused: fill sets every voxel it means to be non-zero, and the same ones each time), and
// closes w. On cancellation or a write error it aborts w, so no half-written image is left.
func writeVolumes(ctx context.Context, w *nifti.Writer, out string, n, size int, rep progress.Reporter, fill func(t int, vol []float32)) error {
	rep.Start("synthesising "+filepath.Base(out), int64(n))
	vol := make([]float32, size)
	for t := 0; t < n; t++ {
		if err := ctx.Err(); err != nil {
			w.Abort()
			return fmt.Errorf("synth: writing %s: %w", out, err)
		}
		fill(t, vol)
		if err := w.WriteVolume(vol); err != nil {
			w.Abort()
			return err
		}
		rep.Add(1)
	}
	return w.Close()
}

// writeTruth writes the module label map and the hub table; on error it removes both.
func writeTruth(g *generator, mask scan.Mask, affine [4][4]float64, modPath, hubPath string) error {
	labels := make([]float32, len(mask.In))
	for v, f := range g.nodes {
		labels[f] = float32(g.truth.Modules[v])
	}
	d := mask.Dims
	if err := nifti.WriteImage(modPath, nifti.NewHeader([]int{d[0], d[1], d[2]}, nifti.Int16, affine, 0), labels); err != nil {
		return err
	}
	if err := writeHubTable(g, affine, hubPath); err != nil {
		os.Remove(modPath)
		return err
	}
	return nil
}

// writeHubTable writes the hub table to a temporary name in the same directory and renames it
// when complete, so that a half-written table never looks finished.
func writeHubTable(g *generator, affine [4][4]float64, path string) (err error) {
	owned.Sweep(filepath.Dir(path), filepath.Base(path)) // a killed run's leftover
	f, err := os.CreateTemp(filepath.Dir(path), owned.Pattern(filepath.Base(path)))
	if err != nil {
		return fmt.Errorf("synth: hub table %s: %w", path, err)
	}
	defer func() {
		if err != nil {
			f.Close()
			os.Remove(f.Name())
		}
	}()
	b := bufio.NewWriter(f)
	fmt.Fprintln(b, "node\ti\tj\tk\tx\ty\tz\tmodules")
	for h, v := range g.truth.Hubs {
		p := g.ijk[v]
		xyz := scan.VoxelToWorld(affine, [3]float64{float64(p[0]), float64(p[1]), float64(p[2])})
		mods := make([]string, len(g.truth.HubModules[h]))
		for i, m := range g.truth.HubModules[h] {
			mods[i] = strconv.Itoa(m)
		}
		fmt.Fprintf(b, "%d\t%d\t%d\t%d\t%s\t%s\t%s\t%s\n", v, p[0], p[1], p[2],
			strconv.FormatFloat(xyz[0], 'f', -1, 64), strconv.FormatFloat(xyz[1], 'f', -1, 64),
			strconv.FormatFloat(xyz[2], 'f', -1, 64), strings.Join(mods, ","))
	}
	if err = b.Flush(); err != nil {
		return fmt.Errorf("synth: hub table %s: %w", path, err)
	}
	if err = f.Close(); err != nil {
		return fmt.Errorf("synth: hub table %s: %w", path, err)
	}
	if err = os.Rename(f.Name(), path); err != nil {
		return fmt.Errorf("synth: hub table %s: %w", path, err)
	}
	return nil
}
