package fc

import (
	"fmt"
	"math"
	"math/bits"
	"runtime"
	"slices"
	"sync"
	"time"
	"unsafe"

	"gonum.org/v1/gonum/stat/distuv"

	"github.com/hubscope/hubscope/helper/network"
)

func (d *driver) pairs() int64 { return int64(d.n) * int64(d.n-1) / 2 }

func (d *driver) emptyNetwork() (*network.Network, error) {
	return buildCSR(d.n, max(d.n, 1), []*panelChunk{nil}, nil)
}

// histogram runs an OpHistogram pass and sums the blocks' counts.
func (d *driver) histogram(op Op) ([]uint64, error) {
	hist := make([]uint64, op.Bins)
	var total, want uint64
	workers := runtime.GOMAXPROCS(0)
	for _, b := range d.blocks {
		want += uint64(b.Pairs())
	}
	err := d.pass("histogram", op, func(r *BlockResult) error {
		if len(r.Hist) != op.Bins {
			return fmt.Errorf("fc: backend returned %d histogram bins for block %+v, want %d", len(r.Hist), r.Block, op.Bins)
		}
		total += addHist(hist, r.Hist, workers)
		return nil
	})
	if err != nil {
		return nil, err
	}
	if total != want {
		return nil, fmt.Errorf("fc: histogram pass on %s counted %d pairs, want %d", d.b.Name(), total, want)
	}
	return hist, nil
}

// addHist adds src into dst and returns Σ src. It runs on the host once per block of a
// histogram pass, between the device's blocks, over all the bins (W2 on an H200: 91 blocks of
// 2²⁰ bins took 60 ms single-threaded, a quarter of the pass), so from 2¹⁶ bins on, chunks of
// bins are summed by up to workers goroutines.
func addHist(dst, src []uint64, workers int) uint64 {
	add := func(d, s []uint64) (t uint64) {
		d = d[:len(s)]
		for i, c := range s {
			d[i] += c
			t += c
		}
		return t
	}
	if len(src) < 1<<16 || workers < 2 {
		return add(dst, src)
	}
	chunk := (len(src) + workers - 1) / workers
	partial := make([]uint64, workers)
	var wg sync.WaitGroup
	for w := 0; w*chunk < len(src); w++ {
		lo, hi := w*chunk, min((w+1)*chunk, len(src))
		wg.Add(1)
		go func() {
			defer wg.Done()
			partial[w] = add(dst[lo:hi], src[lo:hi])
		}()
	}
	wg.Wait()
	var total uint64
	for _, t := range partial {
		total += t
	}
	return total
}

// boundary finds the bin b holding the k-th largest value: above = Σ_{c>b} hist[c] < k ≤ above + hist[b].
func boundary(hist []uint64, k int64) (b int, above int64) {
	for b = len(hist) - 1; b > 0; b-- {
		if above+int64(hist[b]) >= k {
			return b, above
		}
		above += int64(hist[b])
	}
	return 0, above
}

func byValueThenIJ(x, y Edge) int {
	if x.W != y.W {
		if x.W > y.W {
			return -1
		}
		return 1
	}
	return cmpIJ(x, y)
}

// density keeps exactly k = round(D·N(N−1)/2) pairs (docs/algorithms.md, "Thresholds", made exact).
//
// Pass 1 histograms the values; the bin b holding the k-th largest value is found from the
// top. Pass 2 emits every value whose bin (Op.BinOf, the same formula as pass 1) is ≥ b: all
// of bins > b are kept, and from bin b exactly k − Σ_{c>b} hist[c] are chosen by (value desc,
// i, j). Because both passes bin identical float32 values with the same formula, the counts
// agree exactly; the driver verifies that and reports a backend whose passes disagree.
//
// Unless DensityHistogram, pass 1 narrows the histogram to [lo, 1] where lo comes from a sample
// of pairs computed on the host (sampleBounds.tight, about k pairs above it): values below lo
// all land in bin 0. If the k-th largest value then falls in bin 0 the estimate was too high,
// and pass 1 is repeated over [wide, h] (sampleBounds.wide; h the first range's second bin
// edge, values above it clamped into the last bin, all of which are then kept), and if that
// fails too over the whole range [−1, h'], so the narrowing changes speed and resolution,
// never the result. DensitySinglePass (and DensityAuto when the candidates fit) skips pass 1:
// see densitySinglePass.
func (d *driver) density() (*network.Network, error) {
	k, m := d.densityK()
	d.rpt.ThresholdInclusive = true
	if k == 0 {
		d.rpt.Threshold = math.Inf(1)
		return d.emptyNetwork()
	}
	lo := -1.0
	if d.cfg.Abs {
		lo = 0
	}
	bins := d.cfg.Bins
	if bins == 0 {
		bins = DefaultBins
	}
	hop := Op{Kind: OpHistogram, Abs: d.cfg.Abs, Lo: lo, Hi: 1, Bins: bins}
	var ranges []float64 // lower ends of the histogram ranges to try, decreasing; then lo
	if method := d.cfg.DensityMethod; method != DensityHistogram && k < m {
		t0 := time.Now()
		var sb sampleBounds
		var ok bool
		if d.sampled != nil { // started beside Prepare: the stage's time is the wait
			r := <-d.sampled
			sb, ok, d.sampled = r.sb, r.ok, nil
		} else {
			sb, ok = d.sampleBounds(k, m)
		}
		if sampleOverride != nil {
			sb, ok = sampleOverride(sb), true
		}
		d.timing("sample", 0, t0)
		single := method == DensitySinglePass ||
			(method == DensityAuto && d.b.Name() == "cpu" && sb.wideFrac*float64(m)*float64(unsafe.Sizeof(Edge{})) <= SinglePassBudget)
		switch {
		case !ok:
		case single && sb.wideOK && sb.wide > lo && sb.wide < 1:
			nw, err := d.densitySinglePass(sb.wide, k)
			if nw != nil || err != nil {
				return nw, err
			}
			// fewer than k values ≥ wide: no narrowed range can hold the k-th value
		default:
			tight := sb.tight
			if method == DensityAuto && tight > lo && tight < 1 {
				nw, tooFew, err := d.densityOnePass(tight, k, hop)
				if nw != nil || err != nil {
					return nw, err
				}
				if tooFew { // the histogram passes start from the wide bound
					tight = sb.wide
				}
			}
			for _, v := range []float64{tight, sb.wide} {
				if v > lo && v < 1 && (len(ranges) == 0 || v < ranges[len(ranges)-1]) {
					ranges = append(ranges, v)
				}
			}
		}
	}
	ranges = append(ranges, lo)
	var hist []uint64
	var b int
	var above int64
	for r, rlo := range ranges {
		hop.Lo = rlo
		var err error
		if hist, err = d.histogram(hop); err != nil {
			return nil, err
		}
		if b, above = boundary(hist, k); b > 0 || r == len(ranges)-1 {
			break
		}
		// The k-th value is in bin 0, below BinLower(1) up to rounding: BinLower(2) bounds
		// it with a bin of margin, and the at most above < k values over that bound are
		// clamped into the next histogram's last bin, which is therefore never the boundary.
		hop.Hi = hop.BinLower(2)
		d.note(fmt.Sprintf("density: sampled lower bound %.4f was above the %d-th largest value; histogram repeated over [%.4f, %.4f]",
			rlo, k, ranges[r+1], hop.Hi))
	}
	need := k - above
	// Row-ordered backends classify on their side: pass = bin ≥ b (v ≥ holdAt), kept in rows
	// = bin > b (v ≥ keepAt); the same classes as emitBins for every |v| ≤ binRange.
	rop := Op{Kind: OpEdges, Abs: d.cfg.Abs, Inclusive: true, Threshold: float64(binCut(&hop, b))}
	var pre *csrArrays
	if _, ok := d.b.(RowEmitter); ok && !rowsDisabled {
		pre = d.prefault(k) // while the device runs the edge pass
	}
	if rows, err := d.emitRows(rop, binCut(&hop, b+1)); err != nil {
		return nil, err
	} else if rows != nil {
		return d.densityRows(rows, hist[b], b, k, need, pre)
	}
	eop := Op{Kind: OpEdges, Abs: d.cfg.Abs, Inclusive: true, Threshold: math.Inf(-1)}
	if b > 0 {
		// one bin of margin: a value of bin b may compare below BinLower(b) after rounding;
		// membership is decided by BinOf below, not by this comparison.
		eop.Threshold = hop.BinLower(b - 1)
	}
	a, err := d.emitBins(eop, &hop, b) // keep bin > b, hold bin b: hop.BinOf(e.W) compared with b
	if err != nil {
		return nil, err
	}
	if len(a.held) != int(hist[b]) {
		return nil, fmt.Errorf("fc: %s backend is not deterministic: boundary bin %d held %d values in the histogram pass and %d in the edge pass",
			d.b.Name(), b, hist[b], len(a.held))
	}
	t0 := time.Now()
	sel := a.held
	slices.SortFunc(sel, byValueThenIJ)
	sel = sel[:need]
	d.rpt.Threshold = float64(sel[need-1].W)
	slices.SortFunc(sel, cmpIJ)
	nw, err := a.finish(sel)
	if err != nil {
		return nil, err
	}
	if nw.Edges() != k {
		return nil, fmt.Errorf("fc: %s backend is not deterministic: %d edges above the boundary bin in the edge pass, %d in the histogram pass",
			d.b.Name(), nw.Edges()-need, above)
	}
	d.timing("select", 0, t0)
	return nw, nil
}

// densityOnePass is the density mode in one pass over the pairs, for a RowSelector: every
// pair ≥ tight (the sampled bound, about k(1 + a few σ) pairs above it) is kept in its row on
// the backend; a histogram of just those values over [tight, 1] gives the boundary bin b as
// the histogram pass would (values below tight were never kept, so bin 0 is an ordinary bin
// here), and Trim then keeps bin > b, holds bin b and drops the surplus on the backend's
// side, which leaves exactly the state densityRows finishes from. tooFew reports that fewer
// than k pairs reached tight (the sample's bound was too high; rare by construction): the
// edges are dropped and the caller runs the histogram passes. nil, false, nil: the backend
// cannot (RowSelector missing or declining the pass).
func (d *driver) densityOnePass(tight float64, k int64, hop Op) (nw *network.Network, tooFew bool, err error) {
	rs, ok := d.b.(RowSelector)
	if !ok || rowsDisabled {
		return nil, false, nil
	}
	pre := d.prefault(k) // while the device runs the pass
	var sel SelectableRows
	op := Op{Kind: OpEdges, Abs: d.cfg.Abs, Inclusive: true, Threshold: tight}
	rows, err := d.runRows(func(done func(int)) (RowEdges, error) {
		s, err := rs.EmitSelectableRows(d.ctx, d.blocks, op, done)
		sel = s
		return s, err
	})
	if rows == nil || err != nil {
		return nil, false, err
	}
	t0 := time.Now()
	if len(rows.Held()) != 0 {
		rows.Close()
		return nil, false, fmt.Errorf("fc: %s held %d edges in a pass that keeps every passing pair", d.b.Name(), len(rows.Held()))
	}
	var kept int64
	for _, c := range rows.Degrees() {
		kept += int64(c)
	}
	if kept < k {
		rows.Close()
		d.note(fmt.Sprintf("density: %d pairs ≥ sampled bound %.4f, %d needed; histogram pass follows", kept, tight, k))
		return nil, true, nil
	}
	hop.Lo = tight
	hist, err := sel.Histogram(hop)
	if err != nil {
		rows.Close()
		return nil, false, fmt.Errorf("fc: histogram of the kept edges on %s: %w", d.b.Name(), err)
	}
	if len(hist) != hop.Bins {
		rows.Close()
		return nil, false, fmt.Errorf("fc: %s histogram of the kept edges has %d bins, want %d", d.b.Name(), len(hist), hop.Bins)
	}
	b, above := boundary(hist, k)
	total := above // + the bins up to b: one pass over the bins (b is near 0 here)
	for _, c := range hist[:b+1] {
		total += int64(c)
	}
	if total != kept {
		rows.Close()
		return nil, false, fmt.Errorf("fc: %s histogram of %d kept edges counts %d", d.b.Name(), kept, total)
	}
	d.timing("histogram", 0, t0)
	t0 = time.Now()
	if err := sel.Trim(binCut(&hop, b), binCut(&hop, b+1)); err != nil {
		rows.Close()
		return nil, false, fmt.Errorf("fc: trimming the kept edges on %s: %w", d.b.Name(), err)
	}
	if err := d.checkHeld(rows); err != nil {
		return nil, false, err
	}
	d.timing("trim", 0, t0)
	d.note(fmt.Sprintf("density: one pass, %d pairs ≥ sampled bound %.4f kept on %s for %d edges", kept, tight, d.b.Name(), k))
	nw, err = d.densityRows(rows, hist[b], b, k, k-above, pre)
	return nw, false, err
}

// densityRows finishes density() on a RowEmitter's pass: the boundary bin's held values
// must number hist[b] (both passes bin the same float32 values), the need best of them by
// (value desc, i, j) join the kept rows, and the network must have exactly k edges.
func (d *driver) densityRows(rows RowEdges, inBin uint64, b int, k, need int64, pre *csrArrays) (*network.Network, error) {
	held := rows.Held()
	if len(held) != int(inBin) {
		rows.Close()
		return nil, fmt.Errorf("fc: %s backend is not deterministic: boundary bin %d held %d values in the histogram pass and %d in the edge pass",
			d.b.Name(), b, inBin, len(held))
	}
	t0 := time.Now()
	sel := slices.Clone(held)
	slices.SortFunc(sel, byValueThenIJ)
	sel = sel[:need]
	d.rpt.Threshold = float64(sel[need-1].W)
	slices.SortFunc(sel, cmpIJ)
	d.timing("select", 0, t0)
	nw, err := d.finishRows(rows, sel, pre)
	if err != nil {
		return nil, err
	}
	if nw.Edges() != k {
		return nil, fmt.Errorf("fc: %s backend is not deterministic: %d edges above the boundary bin in the edge pass, %d in the histogram pass",
			d.b.Name(), nw.Edges()-need, k-need)
	}
	return nw, nil
}

// densitySinglePass emits every value ≥ lo and keeps the k first in (value desc, i, j) order.
// All values ≥ lo are present, so if there are at least k of them the k-th largest value —
// and with it the selection — is exact. It returns nil (no error) when fewer than k passed.
func (d *driver) densitySinglePass(lo float64, k int64) (*network.Network, error) {
	eop := Op{Kind: OpEdges, Abs: d.cfg.Abs, Inclusive: true, Threshold: lo}
	a, err := d.emitAll(eop, keep)
	if err != nil {
		return nil, err
	}
	if a.kept < k {
		d.note(fmt.Sprintf("density: only %d values ≥ sampled bound %.4f, %d needed; falling back to two passes", a.kept, lo, k))
		return nil, nil
	}
	t0 := time.Now()
	// k-th key: a host histogram of the candidates over [lo, 1] finds its bin; that bin's
	// candidates are sorted.
	hop := Op{Lo: lo, Hi: 1, Bins: DefaultBins}
	hist := make([]uint64, hop.Bins)
	a.each(func(i int, j uint32, w float32) { hist[hop.BinOf(w)]++ })
	b, above := boundary(hist, k)
	hist = nil
	var bnd []Edge
	a.each(func(i int, j uint32, w float32) {
		if hop.BinOf(w) == b {
			bnd = append(bnd, Edge{I: uint32(i), J: j, W: w})
		}
	})
	slices.SortFunc(bnd, byValueThenIJ)
	cut := bnd[k-above-1]
	a.filter(func(i int, j uint32, w float32) bool {
		return byValueThenIJ(Edge{I: uint32(i), J: j, W: w}, cut) <= 0
	})
	d.rpt.Threshold = float64(cut.W)
	nw, err := a.finish(nil)
	if err != nil {
		return nil, err
	}
	if nw.Edges() != k {
		return nil, fmt.Errorf("fc: single-pass density selected %d edges, want %d", nw.Edges(), k)
	}
	d.timing("select", 0, t0)
	return nw, nil
}

// SignDot is the exact integer dot product of two sign vectors held as bit planes
// (SignBitPlanes): popcnt(p_i∧p_j) + popcnt(n_i∧n_j) − popcnt(p_i∧n_j) − popcnt(n_i∧p_j).
func SignDot(pi, ni, pj, nj []uint64) int64 {
	var same, diff int
	for w := range pi {
		same += bits.OnesCount64(pi[w]&pj[w]) + bits.OnesCount64(ni[w]&nj[w])
		diff += bits.OnesCount64(pi[w]&nj[w]) + bits.OnesCount64(ni[w]&pj[w])
	}
	return int64(same - diff)
}

// PValue is the two-sided p of a connectivity value of magnitude a under H0 (no association)
// for series of length l: Student's t = a·sqrt((L−2)/(1−a²)) with L−2 degrees of freedom for
// Pearson and Spearman; for Kendall the normal approximation z = 3a·sqrt(L(L−1))/sqrt(2(2L+5)).
func PValue(m Measure, a float64, l int) float64 {
	a = math.Abs(a)
	if m == Kendall {
		z := 3 * a * math.Sqrt(float64(l)*float64(l-1)) / math.Sqrt(2*float64(2*l+5))
		return math.Erfc(z / math.Sqrt2)
	}
	if a >= 1 {
		return 0
	}
	nu := float64(l - 2)
	t := a * math.Sqrt(nu/(1-a*a))
	return 2 * distuv.StudentsT{Mu: 0, Sigma: 1, Nu: nu}.Survival(t)
}

// CriticalValue inverts PValue: the magnitude a with PValue(a) = p (two-sided), from the
// lower-tail quantiles (accurate for the tiny p of Bonferroni over 10⁸ tests).
func CriticalValue(m Measure, p float64, l int) float64 {
	if m == Kendall {
		z := -distuv.UnitNormal.Quantile(p / 2)
		return z * math.Sqrt(2*float64(2*l+5)) / (3 * math.Sqrt(float64(l)*float64(l-1)))
	}
	nu := float64(l - 2)
	t := -distuv.StudentsT{Mu: 0, Sigma: 1, Nu: nu}.Quantile(p / 2)
	return t / math.Sqrt(nu+t*t)
}

// bonferroni keeps p ≤ α/m, i.e. |v| ≥ CriticalValue(α/m): one edge pass.
func (d *driver) bonferroni() (*network.Network, error) {
	m := d.pairs()
	if m == 0 {
		return d.emptyNetwork()
	}
	v := CriticalValue(d.cfg.Measure, d.cfg.Alpha/float64(m), d.l)
	d.rpt.Threshold, d.rpt.ThresholdInclusive = v, true
	d.note(fmt.Sprintf("Bonferroni: p ≤ %g/%d ⇔ |%s| ≥ %.6f", d.cfg.Alpha, m, d.cfg.Measure, v))
	op := Op{Kind: OpEdges, Abs: d.cfg.Abs, Threshold: v, Inclusive: true}
	a, err := d.emitAll(op, keep)
	if err != nil {
		return nil, err
	}
	return a.finish(nil)
}

// fdr applies Benjamini–Hochberg over the m tests: the largest k with p_(k) ≤ k·α/m, all pairs
// with p ≤ p_(k) rejected. p falls as |v| grows, so p_(k) is the p of the k-th largest |v|.
// A histogram of |v| over [v_α, 1] (v_α: the |v| of p = α, below which no test can be
// rejected) bounds the bins where that k can lie: in bin b the ranks are
// (C_{b+1}, C_b] with values below the bin's upper edge h_b, so if p(h_b) > C_b·α/m no rank
// of bin b qualifies. Every |v| from the lowest possible bin up (one bin of margin for
// rounding) is emitted; their exact ranks give the exact k.
func (d *driver) fdr() (*network.Network, error) {
	m := d.pairs()
	d.rpt.ThresholdInclusive = true
	bins := d.cfg.Bins
	if bins == 0 {
		bins = DefaultBins
	}
	// BH never rejects a test with p > α (p_(k) ≤ k·α/m ≤ α), so |v| below the critical value
	// of α cannot be significant: the histogram starts there (values below fall in bin 0 and
	// skip the binning), with a small margin for the quantile's rounding.
	lo := max(0, CriticalValue(d.cfg.Measure, d.cfg.Alpha, d.l)-1e-6)
	hop := Op{Kind: OpHistogram, Abs: true, Lo: lo, Hi: 1, Bins: bins}
	if !(lo < 1) {
		hop.Lo = 0
	}
	hist, err := d.histogram(hop)
	if err != nil {
		return nil, err
	}
	alpha, fm := d.cfg.Alpha, float64(m)
	pv := func(a float64) float64 { return PValue(d.cfg.Measure, a, d.l) }
	// above[b] = C_b, the count of values in bins ≥ b
	above := make([]int64, bins+1)
	for b := bins - 1; b >= 0; b-- {
		above[b] = above[b+1] + int64(hist[b])
	}
	// Lowest non-empty bin that may hold a qualifying rank. p is costly (incomplete beta), so
	// chunks of bins [b1, b2] are first tested with the necessary condition
	// p(h_{b2}) ≤ C_{b1}·α/m (p only grows and C only shrinks towards the chunk's other end).
	lowest := -1
	const chunk = 1024
	for b1 := 0; b1 < bins && lowest < 0; b1 += chunk {
		b2 := min(b1+chunk, bins) - 1
		if above[b1] == 0 || pv(hop.BinLower(b2+1)) > float64(above[b1])*alpha/fm {
			continue
		}
		for b := b1; b <= b2; b++ {
			if hist[b] > 0 && pv(hop.BinLower(b+1)) <= float64(above[b])*alpha/fm {
				lowest = b
				break
			}
		}
	}
	if lowest < 0 {
		d.rpt.Threshold = math.Inf(1)
		d.note("FDR: no pair is significant")
		return d.emptyNetwork()
	}
	eop := Op{Kind: OpEdges, Abs: true, Inclusive: true, Threshold: hop.BinLower(max(lowest-1, 0))}
	a, err := d.emitAll(eop, hold)
	if err != nil {
		return nil, err
	}
	t0 := time.Now()
	cand := a.held
	slices.SortFunc(cand, byValueThenIJ)
	// largest k with p(v_k) ≤ k·α/m, ranks in chunks [k1, k2] skipped when p(v_k1) > k2·α/m
	kBest := 0
	const kchunk = 1024
	for k2 := len(cand); k2 >= 1 && kBest == 0; k2 -= kchunk {
		k1 := max(1, k2-kchunk+1)
		if pv(float64(cand[k1-1].W)) > float64(k2)*alpha/fm {
			continue
		}
		for k := k2; k >= k1; k-- {
			if pv(float64(cand[k-1].W)) <= float64(k)*alpha/fm {
				kBest = k
				break
			}
		}
	}
	if kBest == 0 {
		d.rpt.Threshold = math.Inf(1)
		d.note("FDR: no pair is significant")
		return d.emptyNetwork()
	}
	cut := cand[kBest-1].W
	d.rpt.Threshold = float64(cut)
	d.note(fmt.Sprintf("FDR: %d of %d tests significant at q = %g (|value| ≥ %.6f)", kBest, m, alpha, cut))
	d.timing("select", 0, t0)
	if d.cfg.Abs {
		sel := cand[:kBest]
		for len(sel) < len(cand) && cand[len(sel)].W == cut { // ties with the cut are rejected too
			sel = cand[:len(sel)+1]
		}
		slices.SortFunc(sel, cmpIJ)
		return buildCSR(d.n, max(d.n, 1), []*panelChunk{nil}, sel)
	}
	// The |v| pass cannot tell signs apart: one more pass keeps the positive significant pairs.
	a.held = nil
	cand = nil
	op := Op{Kind: OpEdges, Threshold: float64(cut), Inclusive: true}
	a, err = d.emitAll(op, keep)
	if err != nil {
		return nil, err
	}
	return a.finish(nil)
}

// knn keeps each node's K best links (union over nodes). One OpTopK pass: every block hands
// back each row's and each column's K best; per-node bounded heaps (memory N·K) merge them.
// The global K best of a node are among its per-block K best, so the merge is exact.
func (d *driver) knn() (*network.Network, error) {
	k := min(d.cfg.K, d.n-1)
	if k < 1 {
		return d.emptyNetwork()
	}
	var heaps TopK
	heaps.Reset(d.n, k)
	op := Op{Kind: OpTopK, Abs: d.cfg.Abs, K: k}
	err := d.pass("topk", op, func(r *BlockResult) error {
		b := r.Block
		for _, e := range r.Edges {
			i, j := int(e.I), int(e.J)
			if i < b.I0 || i >= b.I1 || j < b.J0 || j >= b.J1 || j <= i {
				return fmt.Errorf("fc: backend returned edge (%d,%d) outside block %+v", i, j, b)
			}
			heaps.Push(i, Neighbour{e.J, e.W})
			heaps.Push(j, Neighbour{e.I, e.W})
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	t0 := time.Now()
	es := make([]Edge, 0, d.n*k)
	minW := float32(math.Inf(1))
	for v := 0; v < d.n; v++ {
		for _, c := range heaps.Kept(v) {
			i, j := uint32(v), c.U
			if j < i {
				i, j = j, i
			}
			es = append(es, Edge{I: i, J: j, W: c.W})
			minW = min(minW, c.W)
		}
	}
	heaps = TopK{}
	slices.SortFunc(es, cmpIJ)
	es = slices.CompactFunc(es, func(a, b Edge) bool { return a.I == b.I && a.J == b.J })
	d.rpt.Threshold, d.rpt.ThresholdInclusive = float64(minW), true
	d.timing("select", 0, t0)
	return buildCSR(d.n, max(d.n, 1), []*panelChunk{nil}, es)
}
