package render

import "fmt"

// The marching-cubes case table is derived here from the cube's geometry rather than typed in:
// for each of the 256 inside/outside patterns of a cube's corners, the isoline on every face is
// drawn, the face segments are chained around the cube into closed polygons, and each polygon
// is fanned into triangles. Because a face's segments depend only on the four corners of that
// face, two cubes sharing a face cut it identically, so the surface has no cracks; and faces
// with two diagonal inside corners (the ambiguous case of Lorensen and Cline's table) are always
// cut so that the inside corners join, which keeps neighbouring cubes consistent too.
//
// Corners are numbered in the usual order 0 (0,0,0), 1 (1,0,0), 2 (1,1,0), 3 (0,1,0),
// 4 (0,0,1), 5 (1,0,1), 6 (1,1,1), 7 (0,1,1); edge e joins the corners mcEdgeCorners[e].

// mcCornerOffset is the voxel offset (di, dj, dk) of each cube corner.
var mcCornerOffset = [8][3]int{
	{0, 0, 0}, {1, 0, 0}, {1, 1, 0}, {0, 1, 0},
	{0, 0, 1}, {1, 0, 1}, {1, 1, 1}, {0, 1, 1},
}

// mcEdgeCorners lists the two corners of each of the 12 cube edges.
var mcEdgeCorners = [12][2]int{
	{0, 1}, {1, 2}, {3, 2}, {0, 3},
	{4, 5}, {5, 6}, {7, 6}, {4, 7},
	{0, 4}, {1, 5}, {2, 6}, {3, 7},
}

// mcFaces lists each face's corners counter-clockwise as seen from outside the cube.
var mcFaces = [6][4]int{
	{0, 3, 2, 1}, // z = 0
	{4, 5, 6, 7}, // z = 1
	{0, 1, 5, 4}, // y = 0
	{3, 7, 6, 2}, // y = 1
	{0, 4, 7, 3}, // x = 0
	{1, 2, 6, 5}, // x = 1
}

// mcTriangles[c] holds the triangles of case c as edge triples, wound counter-clockwise as seen
// from the outside of the surface (lower values), so that their right-hand normal points out.
var mcTriangles [256][][3]uint8

func init() {
	var edgeOf [8][8]int
	for e, c := range mcEdgeCorners {
		edgeOf[c[0]][c[1]] = e
		edgeOf[c[1]][c[0]] = e
	}
	// edgeFaces[e] has bit f set when edge e borders face f.
	var edgeFaces [12]uint8
	for f, cs := range mcFaces {
		for k := 0; k < 4; k++ {
			edgeFaces[edgeOf[cs[k]][cs[(k+1)%4]]] |= 1 << f
		}
	}
	for c := 0; c < 256; c++ {
		in := func(corner int) bool { return c>>corner&1 == 1 }
		// next[e] is the crossed edge where the isoline continues after crossed edge e.
		var next [12]int
		for i := range next {
			next[i] = -1
		}
		for _, f := range mcFaces {
			type crossing struct {
				edge int
				exit bool // the face boundary, walked counter-clockwise, leaves the inside here
			}
			var xs []crossing
			for k := 0; k < 4; k++ {
				a, b := f[k], f[(k+1)%4]
				if in(a) != in(b) {
					xs = append(xs, crossing{edgeOf[a][b], in(a)})
				}
			}
			// Each exit is joined to the next entry along the boundary, which cuts off the outside
			// region between them: with four crossings this separates the two outside corners
			// and joins the inside ones, from whichever cube the face is seen.
			for k, x := range xs {
				if x.exit {
					next[x.edge] = xs[(k+1)%len(xs)].edge
				}
			}
		}
		// Every crossed edge is an exit on one of its two faces and an entry on the other, so
		// next is a permutation of the crossed edges; its cycles are the polygons.
		var done [12]bool
		for start := 0; start < 12; start++ {
			if next[start] < 0 || done[start] {
				continue
			}
			var poly []uint8
			for e := start; !done[e]; e = next[e] {
				done[e] = true
				poly = append(poly, uint8(e))
			}
			// The chain runs counter-clockwise around the inside as seen from outside the cube,
			// so its right-hand normal points into the inside: wind every triangle in reverse.
			tris, ok := triangulate(poly, edgeFaces)
			if !ok {
				panic(fmt.Sprintf("render: marching-cubes case %08b: polygon %v has no triangulation off the cube's faces", c, poly))
			}
			for _, t := range tris {
				mcTriangles[c] = append(mcTriangles[c], [3]uint8{t[0], t[2], t[1]})
			}
		}
	}
}

// triangulate splits the polygon poly (edge indices in order) into triangles whose diagonals
// (the edges that are not sides of the polygon) never join two vertices on one face of the
// cube. Such a diagonal lies in the face, where the neighbouring cube may draw the same one,
// leaving four triangles on one edge or a zero-volume fin, and the surface non-manifold (the
// plain fan of case 00000101 does this). The search tries the triangulations in turn (at most
// a few hundred for the ≤ 7-gons marching cubes produces) and returns the first valid one.
func triangulate(poly []uint8, edgeFaces [12]uint8) ([][3]uint8, bool) {
	n := len(poly)
	if n < 3 {
		return nil, true
	}
	a, b := poly[0], poly[n-1]
	for k := 1; k < n-1; k++ {
		p := poly[k]
		// a–p is a side when k = 1, p–b when k = n−2; a–b was checked by the caller.
		if k > 1 && edgeFaces[a]&edgeFaces[p] != 0 || k < n-2 && edgeFaces[p]&edgeFaces[b] != 0 {
			continue
		}
		left, ok := triangulate(poly[:k+1], edgeFaces)
		if !ok {
			continue
		}
		right, ok := triangulate(poly[k:], edgeFaces)
		if !ok {
			continue
		}
		tris := append(left, [3]uint8{a, p, b})
		return append(tris, right...), true
	}
	return nil, false
}
