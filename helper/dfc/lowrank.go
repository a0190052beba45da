package dfc

import (
	"context"
	"errors"
	"fmt"
	"math"
	"math/rand/v2"

	"gonum.org/v1/gonum/floats"
	"gonum.org/v1/gonum/lapack/lapack64"
	"gonum.org/v1/gonum/mat"

	"github.com/hubscope/hubscope/helper/fc"
)

// Low-rank storage of a window's correlation matrix (docs/algorithms.md, "Dynamic connectivity"; "Beyond GPU-DFC's
// storage"). With U the N×w matrix of the window's normalised rows (Pearson: unit rows of the
// centred series; Spearman: of their ranks), the window matrix is S = U Uᵀ, of rank ≤ w.
//
//   - Thin SVD (ours): U = V Σ Wᵀ, so UᵀU = W Σ² Wᵀ is a w×w eigenproblem and F = U W_l
//     (= V_l Σ_l) gives S_l = F Fᵀ = V_l Σ_l² V_lᵀ, the best rank-l approximation of S in the
//     2- and Frobenius norms (Eckart–Young), in O(N·w²) with no N×N product.
//   - Randomized range finder (GPU-DFC, Algorithm 4; Halko et al. 2011): Y = S Ω with Ω an
//     N×l Gaussian matrix, Q from the thin QR of Y, B = Qᵀ S; S ≈ Q B. GPU-DFC forms S and pays
//     N²·l per window; since S = U Uᵀ we evaluate the very same products as Y = U (Uᵀ Ω) and
//     Bᵀ = U (Uᵀ Q), O(N·w·l), which changes nothing in the result but its rounding.
//
// Both are written S ≈ P Rᵀ (SVD: P = R = F; randomized: P = Q, R = Bᵀ) so that one error
// routine serves them. Storage is 2·N·l numbers for (Q, B) and GPU-DFC's compression ratio
// is CR = N²/(2·N·l) = N/(2l) (its eq. 5); F alone is N·l, twice that ratio.

// NormalizedWindow returns U, the N×w float64 matrix of the normalised rows of the window x
// (N×w float32, row-major): p = (d − mean)/‖d − mean‖₂ of the series (Pearson) or of its
// average ranks (Spearman), computed in float64. A constant row becomes a zero row (it
// correlates with nothing). Kendall's τ is not U Uᵀ of a w-column matrix and is refused.
func NormalizedWindow(x []float32, n, w int, m fc.Measure) (*mat.Dense, error) {
	if m != fc.Pearson && m != fc.Spearman {
		return nil, fmt.Errorf("dfc: low-rank factors need Pearson or Spearman (a window's %s matrix is not U·Uᵀ of rank ≤ w)", m)
	}
	if n < 1 || w < 2 || len(x) != n*w {
		return nil, fmt.Errorf("dfc: window matrix has %d values, want N·w = %d·%d", len(x), n, w)
	}
	u := mat.NewDense(n, w, nil)
	raw := u.RawMatrix()
	var rk fc.Ranker
	ranks := make([]float32, w)
	for i := 0; i < n; i++ {
		d := x[i*w : (i+1)*w]
		if m == fc.Spearman {
			rk.Ranks(ranks, d)
			d = ranks
		}
		row := raw.Data[i*raw.Stride : i*raw.Stride+w]
		var s float64
		for _, v := range d {
			s += float64(v)
		}
		mean := s / float64(w)
		var ss float64
		for k, v := range d {
			c := float64(v) - mean
			row[k] = c
			ss += c * c
		}
		if ss == 0 {
			clear(row)
			continue
		}
		inv := 1 / math.Sqrt(ss)
		for k := range row {
			row[k] *= inv
		}
	}
	return u, nil
}

func checkRank(u *mat.Dense, l int) error {
	n, w := u.Dims()
	if l < 1 || l > w || l > n {
		return fmt.Errorf("dfc: rank %d: want 1 ≤ l ≤ min(N, w) = min(%d, %d)", l, n, w)
	}
	return nil
}

// SVDFactor returns F (N×l) with F Fᵀ the best rank-l approximation of S = U Uᵀ, and the
// eigenvalues σ₁² ≥ … ≥ σ_w² of the Gram matrix UᵀU (the squared singular values of U). Cost:
// N·w² for the Gram matrix (a symmetric rank-k update), w³ for its eigendecomposition, N·w·l
// for F. The Gram route squares U's condition number, which costs relative accuracy only in
// directions whose σ² is below ~1e-16·σ₁², and those carry nothing a rank-l S_l keeps.
func SVDFactor(u *mat.Dense, l int) (*mat.Dense, []float64, error) {
	if err := checkRank(u, l); err != nil {
		return nil, nil, err
	}
	_, w := u.Dims()
	g := mat.NewSymDense(w, nil)
	g.SymOuterK(1, u.T()) // UᵀU
	var es mat.EigenSym
	if !es.Factorize(g, true) {
		return nil, nil, errors.New("dfc: eigendecomposition of the window's Gram matrix did not converge")
	}
	vals := es.Values(nil) // ascending
	var vecs mat.Dense
	es.VectorsTo(&vecs)
	wl := mat.NewDense(w, l, nil)
	sigma2 := make([]float64, w)
	for c := 0; c < w; c++ {
		sigma2[c] = max(vals[w-1-c], 0) // round-off can push a zero eigenvalue below 0
	}
	for c := 0; c < l; c++ {
		for r := 0; r < w; r++ {
			wl.Set(r, c, vecs.At(r, w-1-c))
		}
	}
	var f mat.Dense
	f.Mul(u, wl)
	return &f, sigma2, nil
}

// RandomizedFactor is GPU-DFC's Algorithm 4 on S = U Uᵀ: Ω (N×l) standard normal from PCG
// (seed, column), Y = S Ω, Q = thin QR factor of Y (N×l, orthonormal columns), B = Qᵀ S. It returns Q
// and R = Bᵀ = S Q (N×l), so S ≈ Q Rᵀ.
func RandomizedFactor(u *mat.Dense, l int, seed uint64) (q, r *mat.Dense, err error) {
	if err := checkRank(u, l); err != nil {
		return nil, nil, err
	}
	n, w := u.Dims()
	// Column c of Ω comes from its own stream, so the sketches of ranks l < l' share their first
	// l columns: range(Y_l) ⊂ range(Y_l'), and the error ‖S − QQᵀS‖_F cannot grow with l.
	omega := mat.NewDense(n, l, nil)
	for c := 0; c < l; c++ {
		rng := rand.New(rand.NewPCG(seed, uint64(c)))
		for i := 0; i < n; i++ {
			omega.Set(i, c, rng.NormFloat64())
		}
	}
	t := mat.NewDense(w, l, nil)
	t.Mul(u.T(), omega) // UᵀΩ
	y := mat.NewDense(n, l, nil)
	y.Mul(u, t) // Y = U(UᵀΩ) = S Ω
	thinQ(y)
	t.Mul(u.T(), y) // UᵀQ
	r = mat.NewDense(n, l, nil)
	r.Mul(u, t) // Bᵀ = U(UᵀQ) = S Q
	return y, r, nil
}

// thinQ overwrites the N×l matrix a (N ≥ l) with the Q of its thin QR factorisation
// (Householder: LAPACK dgeqrf then dorgqr, which builds only the first l columns of Q; gonum's
// mat.QR would form the full N×N Q).
func thinQ(a *mat.Dense) {
	g := a.RawMatrix()
	tau := make([]float64, min(g.Rows, g.Cols))
	work := []float64{0}
	lapack64.Geqrf(g, tau, work, -1)
	work = make([]float64, max(1, int(work[0])))
	lapack64.Geqrf(g, tau, work, len(work))
	lapack64.Orgqr(g, tau, work[:1], -1)
	if need := int(work[0]); need > len(work) {
		work = make([]float64, need)
	}
	lapack64.Orgqr(g, tau, work, len(work)) // g shares a's storage: a now holds Q
}

// maeBlock is the row/column block of the exact error pass: 512² float64 = 2 MiB per product.
const maeBlock = 512

// MAE is the mean of |S_ij − (P Rᵀ)_ij| over all ordered pairs i ≠ j, with S = U Uᵀ computed
// exactly (float64) block by block: two maeBlock² products at a time, never N×N. Ordered pairs
// because the randomized Q B is not symmetric; the diagonal (S_ii = 1) is left out as the
// network leaves it out. Cost 2·N²·(w + l) flops; ctx is checked between block rows.
func MAE(ctx context.Context, u, p, r *mat.Dense) (float64, error) {
	n, _ := u.Dims()
	if pn, _ := p.Dims(); pn != n {
		return 0, fmt.Errorf("dfc: factor has %d rows for %d nodes", pn, n)
	}
	if rn, _ := r.Dims(); rn != n {
		return 0, fmt.Errorf("dfc: factor has %d rows for %d nodes", rn, n)
	}
	if n < 2 {
		return 0, fmt.Errorf("dfc: MAE needs at least 2 nodes, got %d", n)
	}
	var sum float64
	var ex, ap mat.Dense
	for i0 := 0; i0 < n; i0 += maeBlock {
		if err := ctx.Err(); err != nil {
			return 0, err
		}
		i1 := min(i0+maeBlock, n)
		ui, pi := rows(u, i0, i1), rows(p, i0, i1)
		for j0 := 0; j0 < n; j0 += maeBlock {
			j1 := min(j0+maeBlock, n)
			ex.Reset()
			ap.Reset()
			ex.Mul(ui, rows(u, j0, j1).T())
			ap.Mul(pi, rows(r, j0, j1).T())
			e, a := ex.RawMatrix(), ap.RawMatrix()
			for a0 := 0; a0 < i1-i0; a0++ {
				er, ar := e.Data[a0*e.Stride:a0*e.Stride+j1-j0], a.Data[a0*a.Stride:a0*a.Stride+j1-j0]
				var s float64
				for b0 := range er {
					s += math.Abs(er[b0] - ar[b0])
				}
				if d := i0 + a0 - j0; d >= 0 && d < j1-j0 { // the diagonal pair (i, i)
					s -= math.Abs(er[d] - ar[d])
				}
				sum += s
			}
		}
	}
	return sum / (float64(n) * float64(n-1)), nil
}

func rows(m *mat.Dense, i0, i1 int) mat.Matrix {
	_, c := m.Dims()
	return m.Slice(i0, i1, 0, c)
}

// SampledMAE estimates MAE from samples ordered pairs (i, j), i ≠ j, drawn uniformly from PCG
// (seed); every factor sees the same pairs for the same seed. Its standard error is about
// SD(|error|)/√samples. Cost samples·(w + l) flops.
func SampledMAE(u, p, r *mat.Dense, samples int, seed uint64) (float64, error) {
	n, w := u.Dims()
	_, l := p.Dims()
	if n < 2 || samples < 1 {
		return 0, fmt.Errorf("dfc: sampled MAE needs N ≥ 2 and ≥ 1 sample, got N=%d, %d samples", n, samples)
	}
	ur, pr, rr := u.RawMatrix(), p.RawMatrix(), r.RawMatrix()
	rng := rand.New(rand.NewPCG(seed, 0x6d6165))
	var sum float64
	for range samples {
		i := rng.IntN(n)
		j := rng.IntN(n - 1)
		if j >= i {
			j++
		}
		ex := floats.Dot(ur.Data[i*ur.Stride:i*ur.Stride+w], ur.Data[j*ur.Stride:j*ur.Stride+w])
		ap := floats.Dot(pr.Data[i*pr.Stride:i*pr.Stride+l], rr.Data[j*rr.Stride:j*rr.Stride+l])
		sum += math.Abs(ex - ap)
	}
	return sum / float64(samples), nil
}

// CompressionRatio is GPU-DFC's CR = N²/(2·N·l) = N/(2l) (its eq. 5).
func CompressionRatio(n, l int) float64 { return float64(n) / (2 * float64(l)) }

// LowRank reports the rank-l storage of one window matrix.
type LowRank struct {
	Rank        int     `json:"rank"`
	Compression float64 `json:"compression_ratio"` // N/(2l)
	// MAE of each factor against the exact window matrix: over all ordered pairs i ≠ j when
	// Samples is 0, else over Samples uniformly drawn pairs (the same pairs for both).
	MAESVD        float64 `json:"mae_svd"`
	MAERandomized float64 `json:"mae_randomized"`
	Samples       int     `json:"samples"`
	// Energy is Σ_{c<l} σ_c² / Σ σ_c², the share of ‖U‖_F² (= number of non-constant rows)
	// the rank-l factor keeps.
	Energy float64 `json:"energy"`
}

// LowRankWindow computes both factors of the window matrix U Uᵀ at rank l and their MAE
// (sampled over samples pairs, or exact when samples is 0). It returns the SVD factor F
// (S ≈ F Fᵀ), which is what HubScope stores.
func LowRankWindow(ctx context.Context, u *mat.Dense, l, samples int, seed uint64) (*mat.Dense, LowRank, error) {
	n, _ := u.Dims()
	f, sigma2, err := SVDFactor(u, l)
	if err != nil {
		return nil, LowRank{}, err
	}
	q, r, err := RandomizedFactor(u, l, seed)
	if err != nil {
		return nil, LowRank{}, err
	}
	lr := LowRank{Rank: l, Compression: CompressionRatio(n, l), Samples: samples}
	var tot, kept float64
	for c, s := range sigma2 {
		tot += s
		if c < l {
			kept += s
		}
	}
	if tot > 0 {
		lr.Energy = kept / tot
	}
	if samples > 0 {
		if lr.MAESVD, err = SampledMAE(u, f, f, samples, seed); err != nil {
			return nil, LowRank{}, err
		}
		if lr.MAERandomized, err = SampledMAE(u, q, r, samples, seed); err != nil {
			return nil, LowRank{}, err
		}
	} else {
		if lr.MAESVD, err = MAE(ctx, u, f, f); err != nil {
			return nil, LowRank{}, err
		}
		if lr.MAERandomized, err = MAE(ctx, u, q, r); err != nil {
			return nil, LowRank{}, err
		}
	}
	return f, lr, nil
}
