// Package graphtest holds small graphs with published measures, the in-Go oracles of the
// graph and community packages' tests (they run without Python, so a plain go test checks
// every measure against numbers that do not come from HubScope's own code).
package graphtest

// Karate is Zachary's karate club (W. W. Zachary, J. Anthropol. Res. 33:452–473, 1977): 34
// members, 78 friendships, nodes numbered from 0 (Zachary's member i is node i−1), as
// networkx's karate_club_graph and igraph's "Zachary" list them.
var Karate = [][2]int32{
	{0, 1}, {0, 2}, {0, 3}, {0, 4}, {0, 5}, {0, 6}, {0, 7}, {0, 8}, {0, 10}, {0, 11}, {0, 12}, {0, 13},
	{0, 17}, {0, 19}, {0, 21}, {0, 31}, {1, 2}, {1, 3}, {1, 7}, {1, 13}, {1, 17}, {1, 19}, {1, 21},
	{1, 30}, {2, 3}, {2, 7}, {2, 8}, {2, 9}, {2, 13}, {2, 27}, {2, 28}, {2, 32}, {3, 7}, {3, 12},
	{3, 13}, {4, 6}, {4, 10}, {5, 6}, {5, 10}, {5, 16}, {6, 16}, {8, 30}, {8, 32}, {8, 33}, {9, 33},
	{13, 33}, {14, 32}, {14, 33}, {15, 32}, {15, 33}, {18, 32}, {18, 33}, {19, 33}, {20, 32},
	{20, 33}, {22, 32}, {22, 33}, {23, 25}, {23, 27}, {23, 29}, {23, 32}, {23, 33}, {24, 25},
	{24, 27}, {24, 31}, {25, 31}, {26, 29}, {26, 33}, {27, 33}, {28, 31}, {28, 33}, {29, 32},
	{29, 33}, {30, 32}, {30, 33}, {31, 32}, {31, 33}, {32, 33},
}

// KarateNodes is the club's size.
const KarateNodes = 34

// KarateFaction is the faction each member joined after the split: 0 Mr. Hi's (the
// instructor, node 0), 1 the officer's (node 33), as Zachary's paper records it (member 9,
// node 8, with Mr. Hi; Newman & Girvan 2004 place it with the officer).
var KarateFaction = []int{0, 0, 0, 0, 0, 0, 0, 0, 0, 1, 0, 0, 0, 0, 1, 1, 0, 0, 1, 0, 1, 0, 1, 1,
	1, 1, 1, 1, 1, 1, 1, 1, 1, 1}

// Published measures of the karate club (unweighted). Betweenness is Freeman's, unnormalised,
// each unordered pair once (Newman, Networks, 2nd ed., 2018, §7.1.7, gives 231.07 for Mr. Hi;
// the full list is networkx's betweenness_centrality(normalized=False)); clustering is the
// local coefficient with C_i = 0 for degree < 2 and its mean 0.5706 (Watts & Strogatz's C);
// transitivity 0.2557; L_p 2.4082 and E_glob 0.4920 over all 561 pairs (the club is
// connected); E_loc 0.6451 (Latora & Marchiori 2001); diameter 5; degree assortativity
// −0.4756 (Newman 2002's r). Q of the two factions is 0.3582 (with member 9 moved to the
// officer's faction, 0.3715, the split Newman & Girvan 2004 quote); the best split found by
// any method is 0.4198 (Brandes et al. 2008 proved it optimal).
var (
	KarateBetweenness = []float64{231.071429, 28.478571, 75.850794, 6.288095, 0.333333, 15.833333,
		15.833333, 0, 29.529365, 0.447619, 0.333333, 0, 0, 24.215873, 0, 0, 0, 0, 0, 17.146825, 0, 0,
		0, 9.3, 1.166667, 2.027778, 0, 11.792063, 0.947619, 1.542857, 7.609524, 73.009524, 76.690476,
		160.551587}
	KarateClustering = []float64{0.15, 0.333333, 0.244444, 0.666667, 0.666667, 0.5, 0.5, 1, 0.5, 0,
		0.666667, 0, 1, 0.6, 1, 1, 1, 1, 1, 0.333333, 1, 1, 1, 0.4, 0.333333, 0.333333, 1, 0.166667,
		0.333333, 0.666667, 0.5, 0.2, 0.19697, 0.110294}
)

// The karate club's global measures (see above).
const (
	KarateMeanClustering   = 0.5706384782076823
	KarateTransitivity     = 0.2556818181818182
	KaratePathLength       = 2.408199643493761
	KarateGlobalEfficiency = 0.4920083184789052
	KarateLocalEfficiency  = 0.6451265102000395
	KarateDiameter         = 5
	KarateAssortativity    = -0.47561309768461413
	KarateFactionQ         = 0.3582347140039448
	KarateMaxQ             = 0.4197896120973044
)
