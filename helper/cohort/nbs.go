package cohort

import (
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"

	"github.com/hubscope/hubscope/helper/atlas"
	"github.com/hubscope/hubscope/helper/bids/derivatives"
	"github.com/hubscope/hubscope/helper/bundle"
	"github.com/hubscope/hubscope/helper/stats"
)

// RegionNetworks turns every run's voxel network into a region network on the atlas: the
// value of regions (a, b) is the density of voxel edges between them, edges / (|A|·|B|) over
// the run's nodes in A and B. Only region pairs present in every run are kept.
func RegionNetworks(deriv string, runs []string, atl *atlas.Atlas, dims [3]int, affine [4][4]float64) ([][2]int, [][]float64, []int, error) {
	labels, err := atl.Resample(dims, affine)
	if err != nil {
		return nil, nil, nil, err
	}
	present := map[int]int{}
	type runNet struct {
		size  map[int]int
		count map[[2]int]int
	}
	nets := make([]runNet, len(runs))
	for s, id := range runs {
		r, err := derivatives.ParseID(id)
		if err != nil {
			return nil, nil, nil, err
		}
		dir := BundleDir(deriv, r)
		ijk, err := readNodes(filepath.Join(dir, "nodes.tsv"))
		if err != nil {
			return nil, nil, nil, err
		}
		nw, err := bundle.ReadNetwork(filepath.Join(dir, "network.npz"))
		if err != nil {
			return nil, nil, nil, err
		}
		if nw.N != len(ijk) {
			return nil, nil, nil, fmt.Errorf("%s: network of %d nodes, nodes.tsv lists %d", dir, nw.N, len(ijk))
		}
		reg := make([]int, len(ijk))
		rn := runNet{size: map[int]int{}, count: map[[2]int]int{}}
		for v, x := range ijk {
			if x[0] >= dims[0] || x[1] >= dims[1] || x[2] >= dims[2] {
				return nil, nil, nil, fmt.Errorf("%s: node %d outside the %v grid", dir, v, dims)
			}
			reg[v] = int(labels[x[0]+dims[0]*(x[1]+dims[1]*x[2])])
			if reg[v] != 0 {
				rn.size[reg[v]]++
			}
		}
		for i := 0; i < nw.N; i++ {
			cols, _ := nw.Row(i)
			for _, j := range cols {
				a, b := reg[i], reg[j]
				if a == 0 || b == 0 || a == b {
					continue
				}
				rn.count[[2]int{min(a, b), max(a, b)}]++
			}
		}
		for l := range rn.size {
			present[l]++
		}
		nets[s] = rn
	}
	var regs []int
	for l, c := range present {
		if c == len(runs) {
			regs = append(regs, l)
		}
	}
	sort.Ints(regs)
	var pairs [][2]int
	var vals [][]float64
	for x := 0; x < len(regs); x++ {
		for y := x + 1; y < len(regs); y++ {
			a, b := regs[x], regs[y]
			v := make([]float64, len(runs))
			for s, rn := range nets {
				v[s] = float64(rn.count[[2]int{a, b}]) / (float64(rn.size[a]) * float64(rn.size[b]))
			}
			pairs, vals = append(pairs, [2]int{x, y}), append(vals, v)
		}
	}
	return pairs, vals, regs, nil
}

// runNBS runs the network-based statistic at region scale and writes nbs.tsv (components)
// and nbs_edges.tsv (supra-threshold edges with their component).
func runNBS(opt CompareOptions, runs []string, inA []bool, nd *Nodal) ([]stats.NBSComponent, error) {
	atl, err := atlas.Load(opt.Atlas, opt.AtlasNames)
	if err != nil {
		return nil, err
	}
	pairs, vals, regs, err := RegionNetworks(opt.Deriv, runs, atl, nd.Dims, nd.Affine)
	if err != nil {
		return nil, err
	}
	if len(regs) < 2 {
		return nil, fmt.Errorf("atlas %s: %d region(s) hold nodes of every run; the network-based statistic needs at least 2", opt.Atlas, len(regs))
	}
	perms := opt.Permutations
	if perms == 0 {
		perms = 1000
	}
	thr := opt.NBSThreshold
	if thr == 0 {
		thr = 3
	}
	t, comps, err := stats.NBS(stats.NBSInput{Regions: len(regs), Edges: pairs, Values: vals, InA: inA, Threshold: thr, Permutations: perms, Seed: opt.Seed})
	if err != nil {
		return nil, err
	}
	var cb, eb strings.Builder
	cb.WriteString("component\tedges\tregions\tp_fwe\tregion_names\n")
	eb.WriteString("region_a\tregion_b\tname_a\tname_b\tt\tcomponent\n")
	for c, comp := range comps {
		var names []string
		for _, r := range comp.Regions {
			names = append(names, atl.Name(regs[r]))
		}
		fmt.Fprintf(&cb, "%d\t%d\t%d\t%s\t%s\n", c+1, len(comp.Edges), len(comp.Regions), ff(comp.P), strings.Join(names, "; "))
		for _, k := range comp.Edges {
			a, b := regs[pairs[k][0]], regs[pairs[k][1]]
			fmt.Fprintf(&eb, "%d\t%d\t%s\t%s\t%s\t%d\n", a, b, atl.Name(a), atl.Name(b), strconv.FormatFloat(t[k], 'g', 8, 64), c+1)
		}
	}
	if err := os.WriteFile(filepath.Join(opt.Out, "nbs.tsv"), []byte(cb.String()), 0o644); err != nil {
		return nil, err
	}
	return comps, os.WriteFile(filepath.Join(opt.Out, "nbs_edges.tsv"), []byte(eb.String()), 0o644)
}
