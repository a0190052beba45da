package community

import (
	"math"
	"math/rand/v2"
)

// KrylovBasis holds the Lanczos basis of one leading-eigenvector solve and does its vector
// work: products with the group's modularity matrix B^(G), Gram–Schmidt, restarts. The host
// keeps it in memory (hostKrylov); a KrylovDevice keeps it on an accelerator, so only the
// projected coefficients cross to the host. Slots are basis vectors 0 … capacity−1; w is the
// work vector.
type KrylovBasis interface {
	// Start sets slot 0 to x.
	Start(x []float64) error
	// Apply sets w = B^(G) v_j.
	Apply(j int) error
	// Orthogonalize makes w orthogonal to v_0 … v_j by two Gram–Schmidt passes, adds each
	// pass's coefficients to coef[0 … j] and returns ‖w‖ afterwards.
	Orthogonalize(j int, coef []float64) (float64, error)
	// Fresh sets w = x orthogonalised against v_0 … v_j (two passes) and normalised; it
	// returns the norm before normalising.
	Fresh(x []float64, j int) (float64, error)
	// Store sets v_slot = w / div (div 0: w as it is).
	Store(slot int, div float64) error
	// Restart replaces the basis by the Ritz vectors Σ_i c[r][i] v_i (r < len(c)) followed by
	// the last slot's vector (the residual direction), which moves to slot len(c).
	Restart(c [][]float64) error
	// Combination returns Σ_i c[i] v_i.
	Combination(c []float64) ([]float64, error)
	// Close frees the basis.
	Close()
}

// GroupOperator is B^(G) of one group in the form a KrylovDevice uploads: the group's CSR with
// local indices (Weights nil for a binary graph), every member's degree or strength k_i, the
// row sums Σ_{l∈G} B_il and 2m (groupModularityMatrix's fields).
type GroupOperator struct {
	Offsets []int64
	Adj     []int32
	Weights []float64
	K       []float64
	RowSum  []float64
	TwoM    float64
}

// KrylovDevice runs the Lanczos solves of large groups on an accelerator (the CUDA backend's
// graph accelerator implements it). Bind returns a basis of the given capacity for op, or an
// error, after which the host solves the group.
type KrylovDevice interface {
	BindGroup(op GroupOperator, capacity int) (KrylovBasis, error)
}

// hostKrylov is the KrylovBasis of the host: the basis in memory, modified Gram–Schmidt.
type hostKrylov struct {
	op    operator
	basis [][]float64
	w     []float64
}

func newHostKrylov(op operator, capacity int) *hostKrylov {
	n := op.dim()
	k := &hostKrylov{op: op, basis: make([][]float64, capacity), w: make([]float64, n)}
	for i := range k.basis {
		k.basis[i] = make([]float64, n)
	}
	return k
}

func (k *hostKrylov) Start(x []float64) error { copy(k.basis[0], x); return nil }

func (k *hostKrylov) Apply(j int) error { k.op.apply(k.w, k.basis[j]); return nil }

func (k *hostKrylov) Orthogonalize(j int, coef []float64) (float64, error) {
	w := k.w
	// Two Gram–Schmidt passes against the whole basis keep it orthogonal to working precision
	// ("twice is enough", Giraud et al. 2005); their sums are column j of H. Each subtraction
	// also gives the next coefficient (axpyDot), and the last one ‖w‖².
	c := dot(k.basis[0], w)
	for pass := 0; pass < 2; pass++ {
		for i := 0; i <= j; i++ {
			coef[i] += c
			next := w // after the last vector of the last pass: wᵀw
			if i < j {
				next = k.basis[i+1]
			} else if pass == 0 {
				next = k.basis[0]
			}
			c = axpyDot(-c, k.basis[i], w, next)
		}
	}
	return math.Sqrt(c), nil
}

func (k *hostKrylov) Fresh(x []float64, j int) (float64, error) {
	w := k.w
	copy(w, x)
	for pass := 0; pass < 2; pass++ {
		for _, v := range k.basis[:j+1] {
			axpy(-dot(v, w), v, w)
		}
	}
	return normalize(w), nil
}

func (k *hostKrylov) Store(slot int, div float64) error {
	w := k.w
	if div != 0 {
		for i := range w {
			w[i] /= div
		}
	}
	copy(k.basis[slot], w)
	return nil
}

func (k *hostKrylov) Restart(c [][]float64) error {
	kept := make([][]float64, len(c))
	for r := range c {
		kept[r] = k.combination(c[r])
	}
	copy(k.basis[len(c)], k.basis[len(k.basis)-1])
	for r := range kept {
		copy(k.basis[r], kept[r])
	}
	return nil
}

func (k *hostKrylov) Combination(c []float64) ([]float64, error) { return k.combination(c), nil }

func (k *hostKrylov) combination(c []float64) []float64 {
	x := make([]float64, len(k.w))
	for i, ci := range c {
		axpy(ci, k.basis[i], x)
	}
	return x
}

func (k *hostKrylov) Close() {}

// freshDirection fills kb's work vector with a random unit vector orthogonal to v_0 … v_j
// (n-dimensional space); false when none exists.
func freshDirection(r *rand.Rand, kb KrylovBasis, j, n int) (bool, error) {
	if j+1 >= n {
		return false, nil
	}
	x := make([]float64, n)
	for attempt := 0; attempt < 3; attempt++ {
		for i := range x {
			x[i] = r.NormFloat64()
		}
		nrm, err := kb.Fresh(x, j)
		if err != nil {
			return false, err
		}
		if nrm > 1e-8 {
			return true, nil
		}
	}
	return false, nil
}
