package render

import "testing"

func TestDbg(t *testing.T) {
	id := [4][4]float64{{1, 0, 0, 0}, {0, 1, 0, 0}, {0, 0, 1, 0}, {0, 0, 0, 1}}
	vol := make([]float32, 64)
	c := 0b01000010
	for n, o := range mcCornerOffset {
		if c>>n&1 == 1 {
			vol[(1+o[0])+4*((1+o[1])+4*(1+o[2]))] = 1
		}
	}
	t.Log(mcTriangles[c])
	m, _ := MarchingCubes(vol, [3]int{4, 4, 4}, id, 0.5)
	for i, v := range m.Vertices {
		t.Log(i, v)
	}
	for _, tr := range m.Triangles {
		t.Log(tr)
	}
}
