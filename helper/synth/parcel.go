package synth

import (
	"math/rand/v2"
	"slices"

	"github.com/hubscope/hubscope/helper/scan"
)

// lloydIterations caps the k-means refinement of the parcellation; it converges in a few dozen
// iterations on brain masks, and a capped count keeps the result a fixed function of the inputs.
const lloydIterations = 30

// lloydSample bounds the number of voxels the k-means iterations run on: on larger masks every
// ⌈N/lloydSample⌉-th node stands in for its neighbours (the 1 mm grey-matter mask would otherwise
// cost 10⁹ distance evaluations for centres that move by less than a voxel).
const lloydSample = 50000

// parcellate splits the nodes into m spatially compact modules, labelled 1..m: farthest-point
// sampling on the voxels' world coordinates picks m well-spread seeds (the first drawn from rng),
// then k-means (Lloyd) iterations move each centre to its module's centroid and reassign every
// node to its nearest centre. Ties go to the lower node or module index, so the result depends
// only on the inputs.
func parcellate(ijk [][3]int32, affine [4][4]float64, m int, rng *rand.Rand) []int32 {
	n := len(ijk)
	pos := make([][3]float64, n)
	for v, p := range ijk {
		pos[v] = scan.VoxelToWorld(affine, [3]float64{float64(p[0]), float64(p[1]), float64(p[2])})
	}
	centres := make([][3]float64, 0, m)
	minDist := make([]float64, n)
	first := rng.IntN(n)
	centres = append(centres, pos[first])
	for v := range pos {
		minDist[v] = dist2(pos[v], pos[first])
	}
	for len(centres) < m {
		far := 0
		for v, d := range minDist {
			if d > minDist[far] {
				far = v
			}
		}
		c := pos[far]
		centres = append(centres, c)
		for v := range pos {
			if d := dist2(pos[v], c); d < minDist[v] {
				minDist[v] = d
			}
		}
	}

	sample := pos
	if stride := (n + lloydSample - 1) / lloydSample; stride > 1 {
		sample = make([][3]float64, 0, n/stride+1)
		for v := 0; v < n; v += stride {
			sample = append(sample, pos[v])
		}
	}
	labels := make([]int32, len(sample))
	sums := make([][3]float64, m)
	counts := make([]int, m)
	for it := 0; it < lloydIterations; it++ {
		changed := assign(sample, centres, labels)
		if !changed && it > 0 {
			break
		}
		clear(sums)
		clear(counts)
		for v, p := range sample {
			c := labels[v] - 1
			counts[c]++
			for a := range 3 {
				sums[c][a] += p[a]
			}
		}
		for c := range centres {
			if counts[c] > 0 { // an emptied module keeps its centre
				for a := range 3 {
					centres[c][a] = sums[c][a] / float64(counts[c])
				}
			}
		}
	}
	labels = make([]int32, n)
	assign(pos, centres, labels)
	return labels
}

// assign labels every point with its nearest centre (1-based; ties to the lower index) and
// reports whether any label changed.
func assign(pos, centres [][3]float64, labels []int32) bool {
	changed := false
	for v, p := range pos {
		best, bestD := 0, dist2(p, centres[0])
		for c := 1; c < len(centres); c++ {
			if d := dist2(p, centres[c]); d < bestD {
				best, bestD = c, d
			}
		}
		if lab := int32(best + 1); labels[v] != lab {
			labels[v] = lab
			changed = true
		}
	}
	return changed
}

func dist2(a, b [3]float64) float64 {
	dx, dy, dz := a[0]-b[0], a[1]-b[1], a[2]-b[2]
	return float64(dx*dx) + float64(dy*dy) + float64(dz*dz)
}

// plantHubs draws p.Hubs distinct hub nodes uniformly (Floyd's sampling) and, for each, the
// modules it couples: its own plus others drawn uniformly, p.HubModulesMin..p.HubModulesMax in
// all. Hubs are returned in increasing node order with their module lists sorted.
func plantHubs(labels []int32, p Params, rng *rand.Rand) ([]int, [][]int) {
	n := len(labels)
	chosen := make(map[int]bool, p.Hubs) // membership only; never iterated
	hubs := make([]int, 0, p.Hubs)
	for j := n - p.Hubs; j < n; j++ {
		v := rng.IntN(j + 1)
		if chosen[v] {
			v = j
		}
		chosen[v] = true
		hubs = append(hubs, v)
	}
	slices.Sort(hubs)
	mods := make([][]int, len(hubs))
	for h, v := range hubs {
		k := p.HubModulesMin + rng.IntN(p.HubModulesMax-p.HubModulesMin+1)
		own := int(labels[v])
		set := []int{own}
		for _, m := range rng.Perm(p.Modules) {
			if len(set) == k {
				break
			}
			if m+1 != own {
				set = append(set, m+1)
			}
		}
		slices.Sort(set)
		mods[h] = set
	}
	return hubs, mods
}
