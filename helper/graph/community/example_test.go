package community_test

import (
	"context"
	"fmt"

	"github.com/hubscope/hubscope/helper/graph"
	"github.com/hubscope/hubscope/helper/graph/community"
)

// Two triangles joined by the edge 2–3: both methods find the triangles (Q = 5/14), and the
// two bridge nodes are the only ones with links to the other module.
func Example() {
	g := &graph.Graph{
		N:       6,
		Offsets: []int64{0, 2, 4, 7, 10, 12, 14},
		Adj:     []int32{1, 2, 0, 2, 0, 1, 3, 2, 4, 5, 3, 5, 3, 4},
	}
	ctx := context.Background()
	le, err := community.LeadingEigenvectorModules(ctx, g, community.LeadingEigenvectorOptions{}, nil)
	if err != nil {
		fmt.Println(err)
		return
	}
	ld, err := community.LeidenModules(ctx, g, community.LeidenOptions{Seed: 1}, nil)
	if err != nil {
		fmt.Println(err)
		return
	}
	p, _ := community.ParticipationCoefficient(g, ld.Membership, false)
	z, _ := community.WithinModuleDegreeZScore(g, ld.Membership, false)
	roles, _ := community.ClassifyRoles(z, p, nil, community.DefaultRoleThresholds)
	fmt.Printf("leading eigenvector: %d modules, sizes %v, Q = %.4f\n", le.Count(), le.Sizes, le.Q)
	fmt.Printf("Leiden: %d modules, Q = %.4f\n", ld.Count(), ld.Q)
	fmt.Printf("map labels: %v\n", community.RelabelBySize(ld.Membership))
	fmt.Printf("P: %.3f\n", p)
	fmt.Printf("node 2: %v\n", roles[2])
	// Output:
	// leading eigenvector: 2 modules, sizes [3 3], Q = 0.3571
	// Leiden: 2 modules, Q = 0.3571
	// map labels: [1 1 1 2 2 2]
	// P: [0.000 0.000 0.444 0.444 0.000 0.000]
	// node 2: peripheral
}
