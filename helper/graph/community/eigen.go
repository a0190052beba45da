package community

import (
	"context"
	"fmt"
	"math"
	"math/rand/v2"
	"runtime"
	"sort"
	"sync"

	"gonum.org/v1/gonum/mat"

	"github.com/hubscope/hubscope/helper/graph"
)

// groupModularityMatrix applies Newman's generalized modularity matrix of a group G,
//
//	B^(G)_ij = A_ij − k_i k_j / 2m − δ_ij Σ_{l∈G} (A_il − k_i k_l / 2m),   i, j ∈ G,
//
// to a vector without forming it: a sparse product with A restricted to G, one rank-1 term and
// one diagonal term (Newman 2006, eq. 6; Wang et al. 2013). A restricted to G is copied once per
// group into a CSR with local indices (O(edges in G)), so every product is a plain SpMV.
type groupModularityMatrix struct {
	g        *graph.Graph
	weighted bool
	k        []float64 // degree (strength) of every node of the graph
	twoM     float64
	members  []int32 // global node ids of G
	local    []int32 // global id → index in members, −1 outside G (shared, length N)
	kG       []float64
	rowSumG  []float64 // Σ_{l∈G} B_il for each member i
	subOff   []int64   // A restricted to G, local indices
	subAdj   []int32
	subW     []float64 // nil for a binary graph
}

// bind prepares the operator for group members; local must be −1 everywhere on entry and is
// restored by unbind.
func (b *groupModularityMatrix) bind(members []int32) {
	b.members = members
	n := len(members)
	for li, v := range members {
		b.local[v] = int32(li)
	}
	b.kG = resize(b.kG, n)
	b.rowSumG = resize(b.rowSumG, n)
	if cap(b.subOff) < n+1 {
		b.subOff = make([]int64, n+1)
	}
	b.subOff = b.subOff[:n+1]
	b.subAdj = b.subAdj[:0]
	weighted := b.weighted && b.g.Weights != nil
	if weighted {
		b.subW = b.subW[:0]
	} else {
		b.subW = nil
	}
	var kTotalG float64
	for li, v := range members {
		b.kG[li] = b.k[v]
		kTotalG += b.k[v]
	}
	g := b.g
	for li, v := range members {
		var inside float64
		for p := g.Offsets[v]; p < g.Offsets[v+1]; p++ {
			if lu := b.local[g.Adj[p]]; lu >= 0 {
				w := edgeWeight(g, p, b.weighted)
				inside += w
				b.subAdj = append(b.subAdj, lu)
				if weighted {
					b.subW = append(b.subW, w)
				}
			}
		}
		b.subOff[li+1] = int64(len(b.subAdj))
		b.rowSumG[li] = inside - b.k[v]*kTotalG/b.twoM
	}
}

func (b *groupModularityMatrix) unbind() {
	for _, v := range b.members {
		b.local[v] = -1
	}
	b.members = nil
}

func (b *groupModularityMatrix) dim() int { return len(b.members) }

// groupOperator is the bound group's B^(G) for a KrylovDevice.
func (b *groupModularityMatrix) groupOperator() GroupOperator {
	n := len(b.members)
	return GroupOperator{Offsets: b.subOff[:n+1], Adj: b.subAdj, Weights: b.subW, K: b.kG[:n], RowSum: b.rowSumG[:n], TwoM: b.twoM}
}

// parallelApplyMin is the group size from which a product with B^(G) is split over the
// available cores; below it, goroutine start-up costs more than it saves.
const parallelApplyMin = 4096

// apply sets y = B^(G) x.
func (b *groupModularityMatrix) apply(y, x []float64) {
	var kx float64
	for li := range b.members {
		kx += b.kG[li] * x[li]
	}
	kx /= b.twoM
	n := len(b.members)
	workers := runtime.GOMAXPROCS(0)
	if n < parallelApplyMin || workers < 2 {
		b.applyRows(y, x, kx, 0, n)
		return
	}
	var wg sync.WaitGroup
	chunk := (n + workers - 1) / workers
	for lo := 0; lo < n; lo += chunk {
		hi := min(lo+chunk, n)
		wg.Add(1)
		go func() {
			defer wg.Done()
			b.applyRows(y, x, kx, lo, hi)
		}()
	}
	wg.Wait()
}

// applyRows computes rows [lo, hi) of y = B^(G) x given kx = kᵀx / 2m.
func (b *groupModularityMatrix) applyRows(y, x []float64, kx float64, lo, hi int) {
	off, adj, ws := b.subOff, b.subAdj, b.subW
	for li := lo; li < hi; li++ {
		var ax float64
		if ws == nil {
			ax = gatherSum(x, adj[off[li]:off[li+1]])
		} else {
			row := ws[off[li]:off[li+1]]
			for q, lu := range adj[off[li]:off[li+1]] {
				ax += row[q] * x[lu]
			}
		}
		y[li] = ax - b.kG[li]*kx - b.rowSumG[li]*x[li]
	}
}

// gatherSum is Σ x[i] over idx in four interleaved partial sums (as dot), so the adds of a
// row's gathered entries do not wait on each other.
func gatherSum(x []float64, idx []int32) float64 {
	var s0, s1, s2, s3 float64
	q := 0
	for ; q+4 <= len(idx); q += 4 {
		s0 += x[idx[q]]
		s1 += x[idx[q+1]]
		s2 += x[idx[q+2]]
		s3 += x[idx[q+3]]
	}
	for ; q < len(idx); q++ {
		s0 += x[idx[q]]
	}
	return (s0 + s1) + (s2 + s3)
}

func resize(s []float64, n int) []float64 {
	if cap(s) < n {
		return make([]float64, n)
	}
	return s[:n]
}

// EigenSolver names the method that finds the leading eigenpair of B^(G).
type EigenSolver int

const (
	// Lanczos is a thick-restart Lanczos iteration with full reorthogonalization (Wu & Simon
	// 2000), the Krylov–Schur scheme ARPACK's implicitly restarted Lanczos is equivalent to. It
	// finds the most positive eigenvalue directly and converges in far fewer products than
	// power iteration when the top of the spectrum is crowded, as in brain networks.
	Lanczos EigenSolver = iota
	// PowerIteration is the method of Wu et al. (2010) and Wang et al. (2013): iterate with
	// B^(G); when the dominant eigenvalue is negative, iterate again with B^(G) − λ I so that the
	// most positive eigenvalue becomes dominant.
	PowerIteration
)

func (s EigenSolver) String() string {
	switch s {
	case Lanczos:
		return "Lanczos"
	case PowerIteration:
		return "power iteration"
	}
	return fmt.Sprintf("EigenSolver(%d)", int(s))
}

// eigenOptions bounds an eigen-solve.
type eigenOptions struct {
	tol      float64 // relative residual ‖Bx − λx‖ ≤ tol·‖B‖_est
	maxApply int     // cap on products with B^(G)
	seed     uint64
	// device, when set, returns a KrylovBasis of the given capacity on an accelerator for the
	// operator being solved (Lanczos only); an error keeps the solve on the host.
	device func(capacity int) (KrylovBasis, error)
}

// eigenResult is the most positive eigenpair found and how the solve went.
type eigenResult struct {
	value     float64
	vector    []float64
	products  int
	residual  float64
	converged bool
}

// operator is a symmetric matrix applied implicitly.
type operator interface {
	dim() int
	apply(y, x []float64)
}

// startVector is a seeded random unit vector; a random start is almost surely not orthogonal to
// the leading eigenvector (a constant start would be: 1 is B^(G)'s eigenvector for 0).
func startVector(n int, seed uint64) []float64 {
	r := rand.New(rand.NewPCG(seed, 0x9e3779b97f4a7c15))
	x := make([]float64, n)
	for i := range x {
		x[i] = r.NormFloat64()
	}
	normalize(x)
	return x
}

// dot is aᵀb summed in four interleaved partial sums (indices ≡ 0, 1, 2, 3 mod 4), so the adds
// do not wait on each other; the order is fixed, so the result does not depend on anything
// but a and b.
func dot(a, b []float64) float64 {
	b = b[:len(a)]
	var s0, s1, s2, s3 float64
	i := 0
	for ; i+4 <= len(a); i += 4 {
		s0 += a[i] * b[i]
		s1 += a[i+1] * b[i+1]
		s2 += a[i+2] * b[i+2]
		s3 += a[i+3] * b[i+3]
	}
	for ; i < len(a); i++ {
		s0 += a[i] * b[i]
	}
	return (s0 + s1) + (s2 + s3)
}

// axpyDot sets y += alpha·x and returns zᵀy of the updated y, in one pass over y (summed as
// dot sums). Modified Gram–Schmidt subtracts one basis vector and takes the next one's
// coefficient from the result: fused, y is read once per basis vector instead of twice.
func axpyDot(alpha float64, x, y, z []float64) float64 {
	x, z = x[:len(y)], z[:len(y)]
	var s0, s1, s2, s3 float64
	i := 0
	for ; i+4 <= len(y); i += 4 {
		y0 := y[i] + alpha*x[i]
		y1 := y[i+1] + alpha*x[i+1]
		y2 := y[i+2] + alpha*x[i+2]
		y3 := y[i+3] + alpha*x[i+3]
		y[i], y[i+1], y[i+2], y[i+3] = y0, y1, y2, y3
		s0 += z[i] * y0
		s1 += z[i+1] * y1
		s2 += z[i+2] * y2
		s3 += z[i+3] * y3
	}
	for ; i < len(y); i++ {
		y[i] += alpha * x[i]
		s0 += z[i] * y[i]
	}
	return (s0 + s1) + (s2 + s3)
}

func axpy(alpha float64, x, y []float64) {
	for i := range x {
		y[i] += alpha * x[i]
	}
}

func normalize(x []float64) float64 {
	n := math.Sqrt(dot(x, x))
	if n > 0 {
		for i := range x {
			x[i] /= n
		}
	}
	return n
}

// leadingEigenpairLanczos returns the most positive (largest algebraic) eigenpair of op by a
// thick-restart Lanczos iteration: a Krylov basis of at most m vectors, kept orthonormal by two
// passes of classical Gram–Schmidt; at each restart the `keep` Ritz vectors of largest Ritz
// value are retained together with the residual direction (Wu & Simon 2000, SIAM J Matrix Anal
// Appl 22:602). The projected matrix H = VᵀBV is m×m and dense; its eigenproblem is tiny.
func leadingEigenpairLanczos(ctx context.Context, op operator, o eigenOptions) (eigenResult, error) {
	n := op.dim()
	if n == 0 {
		return eigenResult{}, nil
	}
	if n == 1 {
		x := []float64{1}
		y := []float64{0}
		op.apply(y, x)
		return eigenResult{value: y[0], vector: x, products: 1, converged: true}, nil
	}
	ld := min(n, 40) // basis capacity (and row stride of h)
	if o.device != nil {
		if kb, err := o.device(ld + 1); err == nil {
			defer kb.Close()
			return lanczos(ctx, kb, n, ld, o)
		}
	}
	return lanczos(ctx, newHostKrylov(op, ld+1), n, ld, o)
}

// lanczos is leadingEigenpairLanczos' iteration over the basis kb of an n-dimensional operator,
// ld vectors at most (+1 for the residual direction).
func lanczos(ctx context.Context, kb KrylovBasis, n, ld int, o eigenOptions) (eigenResult, error) {
	keep := max(min(ld/3, 12), 1)
	if err := kb.Start(startVector(n, o.seed)); err != nil {
		return eigenResult{}, err
	}
	h := make([]float64, ld*ld) // H[i*ld+j] = v_iᵀ B v_j for i ≤ j
	coef := make([]float64, ld)
	var eig mat.EigenSym
	rnd := rand.New(rand.NewPCG(o.seed^0x5851f42d4c957f2d, 1))

	start := 0 // first basis vector whose column of H is still to be computed
	var res eigenResult
	var normEst float64
	for {
		m := ld        // size of the projected problem this cycle
		betaM := 0.0   // coupling of the last basis vector to the residual direction
		whole := false // the basis spans the whole space: H's eigenpairs are B's
		for j := start; j < ld; j++ {
			if err := ctx.Err(); err != nil {
				return res, err
			}
			if err := kb.Apply(j); err != nil {
				return res, err
			}
			res.products++
			for i := 0; i <= j; i++ {
				coef[i] = 0
			}
			// Two Gram–Schmidt passes against the whole basis; their sums are column j of H.
			beta, err := kb.Orthogonalize(j, coef)
			if err != nil {
				return res, err
			}
			for i := 0; i <= j; i++ {
				h[i*ld+j] = coef[i]
			}
			normEst = math.Max(normEst, math.Abs(coef[j])+beta)
			if beta <= 1e-13*math.Max(normEst, 1) {
				// Invariant subspace: continue with a fresh random direction orthogonal to the
				// basis, coupled by β = 0, so that eigenvalues outside the subspace stay reachable.
				beta = 0
				ok, err := freshDirection(rnd, kb, j, n)
				if err != nil {
					return res, err
				}
				if !ok {
					m, betaM, whole = j+1, 0, true
					break
				}
			}
			if err := kb.Store(j+1, beta); err != nil {
				return res, err
			}
			betaM = beta
		}
		sym := mat.NewSymDense(m, nil)
		for i := 0; i < m; i++ {
			for j := i; j < m; j++ {
				sym.SetSym(i, j, h[i*ld+j])
			}
		}
		if !eig.Factorize(sym, true) {
			return res, fmt.Errorf("community: Lanczos projected eigenproblem of order %d did not converge", m)
		}
		vals := eig.Values(nil)
		vecs := mat.NewDense(m, m, nil)
		eig.VectorsTo(vecs)
		order := make([]int, m)
		for i := range order {
			order[i] = i
		}
		sort.Slice(order, func(a, b int) bool { return vals[order[a]] > vals[order[b]] })
		top := order[0]
		theta := vals[top]
		normEst = math.Max(normEst, math.Max(math.Abs(theta), math.Abs(vals[order[m-1]])))
		// ‖B V y − θ V y‖ = |β_m y_m| for a Ritz pair (V y, θ).
		residual := math.Abs(betaM * vecs.At(m-1, top))
		res.value, res.residual = theta, residual
		// Lanczos' relation B V = V H + β_m v_{m+1} e_mᵀ holds at the end of every cycle (full
		// reorthogonalisation, thick restart included), so the residual above is the top Ritz
		// pair's true one. β_m = 0 (the last step met an invariant subspace and took a fresh
		// direction) makes V invariant: its Ritz pairs are exact, and V holds the Krylov space
		// of the random start, which reaches the leading eigenvector. Requiring β_m > 0 there,
		// as before, restarted low-rank groups (every step invariant) to the product cap, and
		// groups of ≤ 40 nodes, whose basis spans the whole space at capacity, too.
		done := whole || m < ld || residual <= o.tol*normEst
		if done || res.products >= o.maxApply {
			c := make([]float64, m)
			for i := range c {
				c[i] = vecs.At(i, top)
			}
			x, err := kb.Combination(c)
			if err != nil {
				return res, err
			}
			normalize(x)
			res.vector = x
			res.converged = done
			return res, nil
		}
		// Thick restart: basis ← [V y_1 … V y_keep, v_{m+1}]; H ← diag(θ_1 … θ_keep), whose
		// border (the residual couplings β_m y_{m,r}) the next Gram–Schmidt column recomputes.
		c := make([][]float64, keep)
		for r := range c {
			c[r] = make([]float64, m)
			for i := range c[r] {
				c[r][i] = vecs.At(i, order[r])
			}
		}
		if err := kb.Restart(c); err != nil {
			return res, err
		}
		for i := range h {
			h[i] = 0
		}
		for r := 0; r < keep; r++ {
			h[r*ld+r] = vals[order[r]]
		}
		start = keep
	}
}

// leadingEigenpairPower returns the most positive eigenpair of op by power iteration with a
// shift, as Wu et al. (2010) and Wang et al. (2013) do: iterate x ← (B − σI)x/‖·‖ with σ = 0;
// if the dominant eigenvalue λ̂ found is negative, restart with σ = λ̂, which makes every
// eigenvalue of B − σI non-negative, and report β = λ₁(B − σI) + σ.
func leadingEigenpairPower(ctx context.Context, op operator, o eigenOptions) (eigenResult, error) {
	n := op.dim()
	if n == 0 {
		return eigenResult{}, nil
	}
	res, err := shiftedPower(ctx, op, 0, o)
	if err != nil || res.value >= 0 {
		return res, err
	}
	used := res.products
	o.maxApply -= used
	shifted, err := shiftedPower(ctx, op, res.value, o)
	shifted.products += used
	return shifted, err
}

// shiftedPower iterates with B − σI until the residual ‖Bx − λx‖ ≤ tol·|λ − σ| of the Rayleigh
// quotient λ = xᵀBx; it returns the eigenvalue of B itself.
func shiftedPower(ctx context.Context, op operator, sigma float64, o eigenOptions) (eigenResult, error) {
	n := op.dim()
	x := startVector(n, o.seed)
	y := make([]float64, n)
	var res eigenResult
	for res.products < o.maxApply {
		if res.products%16 == 0 {
			if err := ctx.Err(); err != nil {
				return res, err
			}
		}
		op.apply(y, x)
		res.products++
		lambda := dot(x, y) // Rayleigh quotient of B (x is a unit vector)
		var r2 float64
		for i := range y {
			d := y[i] - lambda*x[i]
			r2 += d * d
		}
		res.value, res.residual = lambda, math.Sqrt(r2)
		scale := math.Abs(lambda - sigma)
		for i := range y {
			y[i] -= sigma * x[i]
		}
		if res.residual <= o.tol*math.Max(scale, 1e-300) {
			res.converged = true
			res.vector = x
			return res, nil
		}
		if normalize(y) == 0 {
			// x lies in the null space of B − σI: it is an eigenvector for σ.
			res.value, res.converged, res.vector = sigma, true, x
			return res, nil
		}
		x, y = y, x
	}
	res.vector = x
	return res, nil
}
