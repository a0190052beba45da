package schema

// Metrics is the content of metrics.json: the scan after masking, the network and its
// threshold, the hub rule, the global measures and the modules (docs/bundle.md). Fields a run
// did not compute (basic metrics, no random networks) are absent.
type Metrics struct {
	Scan    ScanInfo    `json:"scan"`
	Network NetworkInfo `json:"network"`
	Hubs    HubInfo     `json:"hubs"`
	Global  *Global     `json:"global,omitempty"` // full metrics
	// GlobalBasic is what basic metrics measure globally (no path-based measures).
	GlobalBasic *BasicGlobal `json:"global_basic,omitempty"`
	Modules     []ModuleInfo `json:"modules,omitempty"`
	// Demo compares the result with the demo phantom's planted modules and hubs (demo only).
	Demo *TruthCheck `json:"demo_truth_check,omitempty"`
	// Undefined says, for every measure written as null (or left out) because it has no
	// value on this network, why — keyed by its JSON path ("global.assortativity").
	Undefined map[string]string `json:"undefined,omitempty"`
	// Denoise is what the cleaning did; absent when the series were used as loaded.
	Denoise *Denoise `json:"denoise,omitempty"`
}

// ScanInfo describes the input after masking.
type ScanInfo struct {
	Path         string  `json:"path"`
	MaskRule     string  `json:"mask_rule,omitempty"` // how the nodes were chosen (scan.MaskRule*)
	Nodes        int     `json:"nodes"`
	TimePoints   int     `json:"time_points"`
	TR           float64 `json:"tr_seconds"`
	Grid         [3]int  `json:"grid"`
	MaskVoxels   int     `json:"mask_voxels"`
	ZeroVariance int     `json:"dropped_zero_variance"`
	NonFinite    int     `json:"dropped_non_finite"`
}

// NetworkInfo is the threshold report docs/algorithms.md, "Thresholds", asks for.
type NetworkInfo struct {
	Measure            string  `json:"measure"`
	Abs                bool    `json:"abs"`
	Mode               string  `json:"threshold_mode"`
	Correction         string  `json:"correction,omitempty"`
	Threshold          float64 `json:"threshold"`
	ThresholdInclusive bool    `json:"threshold_inclusive"`
	Edges              int64   `json:"edges"`
	Density            float64 `json:"density"`
	MeanDegree         float64 `json:"mean_degree"`
	Isolated           int     `json:"isolated_nodes"`
	LargestComponent   int     `json:"largest_component"`
	Backend            string  `json:"backend"`
	Device             string  `json:"device,omitempty"`
}

// HubInfo states the hub rule and its outcome.
type HubInfo struct {
	Rule       string  `json:"rule"`
	Cutoff     float64 `json:"degree_cutoff"`
	MeanDegree float64 `json:"mean_degree"`
	SDDegree   float64 `json:"sd_degree"`
	Count      int     `json:"count"`
	// Atlas is the atlas behind hubs.tsv's atlas_label: --atlas's file, or the embedded AAL
	// when the scan is in MNI space (registered or by its header and grid); "" when none.
	Atlas string `json:"atlas,omitempty"`
	// Regions are the atlas regions holding the most hubs (at most 5, most first, then by
	// name; hubs outside every region are not counted).
	Regions []HubRegion `json:"regions,omitempty"`
	// Unnamed says why no atlas names the hubs (the scan is not in MNI space and was not
	// registered, ...); "" when named or for inputs without voxels.
	Unnamed string `json:"unnamed,omitempty"`
}

// HubRegion is an atlas region and how many hubs lie in it.
type HubRegion struct {
	Name string `json:"name"`
	Hubs int    `json:"hubs"`
}

// ModuleInfo summarises one module-finding method.
type ModuleInfo struct {
	Method string  `json:"method"`
	Q      float64 `json:"q"`
	Count  int     `json:"count"` // every module, single nodes included
	// Modules of ≥ 2 nodes, and nodes alone in their module (isolated nodes, mostly): what a
	// reader means by "modules" is the first.
	Modules     int   `json:"modules_of_two_or_more"`
	SingleNodes int   `json:"single_node_modules"`
	Sizes       []int `json:"sizes"`
	// Against the random networks (when any were asked for).
	RandomQMean *float64 `json:"random_q_mean,omitempty"`
	RandomQSD   *float64 `json:"random_q_sd,omitempty"`
	QZScore     *float64 `json:"q_z_score,omitempty"`
	// QZScoreUndefined says in words why QZScore is absent although random networks ran.
	QZScoreUndefined string `json:"-"`
}

// BasicGlobal holds the global measures of basic metrics: those that need no all-pairs search.
type BasicGlobal struct {
	ClusteringCoefficient float64  `json:"clustering_coefficient"` // C_p (igraph mode="zero")
	Components            int      `json:"components"`
	LargestComponentSize  int      `json:"largest_component_size"`
	LargestComponentShare float64  `json:"largest_component_share"`
	Assortativity         *float64 `json:"assortativity"`
}

// Global gathers the whole-network measures written to metrics.json (snake_case keys). Every
// number is finite; a measure that is undefined for this graph (assortativity of a regular
// graph, say) or was not asked for is null or absent, never NaN.
type Global struct {
	Nodes                 int     `json:"nodes"`
	Edges                 int64   `json:"edges"`
	Density               float64 `json:"density"`
	MeanDegree            float64 `json:"mean_degree"`
	DegreeSD              float64 `json:"degree_sd"` // population SD, the hub rule's σ
	MaxDegree             int     `json:"max_degree"`
	MeanStrength          float64 `json:"mean_strength"`
	IsolatedNodes         int     `json:"isolated_nodes"`
	Components            int     `json:"components"`
	LargestComponentSize  int     `json:"largest_component_size"`
	LargestComponentShare float64 `json:"largest_component_share"`
	HubCount              int     `json:"hub_count"` // nodes with degree > mean + 1 SD

	// C_p, mean binary clustering with C_i = 0 for degree < 2 (igraph mode="zero").
	ClusteringCoefficient float64 `json:"clustering_coefficient"`
	// Mean Onnela weighted clustering; absent for binary graphs.
	WeightedClusteringCoefficient *float64 `json:"weighted_clustering_coefficient,omitempty"`
	// L_p over connected pairs (igraph unconn=True) and E_glob over all pairs.
	CharacteristicPathLength float64 `json:"characteristic_path_length"`
	GlobalEfficiency         float64 `json:"global_efficiency"`
	ConnectedPairs           int64   `json:"connected_pairs"`
	Diameter                 int     `json:"diameter"`
	// Mean local efficiency (networkx local_efficiency); absent unless asked for.
	LocalEfficiency *float64 `json:"local_efficiency,omitempty"`
	// Newman's degree assortativity; null when undefined.
	Assortativity *float64 `json:"assortativity"`

	SmallWorld         *SmallWorldResult   `json:"small_world,omitempty"`
	DegreeDistribution *DegreeDistribution `json:"degree_distribution,omitempty"`
	// DegreeDistributionUndefined says in words why the degrees could not be fitted (the
	// FitError's reason) when DegreeDistribution was asked for and is absent.
	DegreeDistributionUndefined string `json:"-"`
}

// SmallWorldResult compares g with degree-preserving random networks (Humphries et al. 2008;
// Wang et al. 2013): γ = C_p / ⟨C_p,rand⟩, λ = L_p / ⟨L_p,rand⟩, σ = γ / λ, where ⟨·⟩ is the mean
// over the K random networks. SDs are sample standard deviations (n − 1) over the K networks.
type SmallWorldResult struct {
	ClusteringCoefficient    float64   `json:"clustering_coefficient"`     // C_p of g
	CharacteristicPathLength float64   `json:"characteristic_path_length"` // L_p of g
	RandomClustering         []float64 `json:"random_clustering"`          // C_p of each random network
	RandomPathLength         []float64 `json:"random_path_length"`         // L_p of each random network
	RandomClusteringMean     float64   `json:"random_clustering_mean"`
	RandomClusteringSD       float64   `json:"random_clustering_sd"`
	RandomPathLengthMean     float64   `json:"random_path_length_mean"`
	RandomPathLengthSD       float64   `json:"random_path_length_sd"`
	Gamma                    float64   `json:"gamma"`  // normalised clustering γ
	Lambda                   float64   `json:"lambda"` // normalised path length λ
	Sigma                    float64   `json:"sigma"`  // small-worldness σ = γ/λ
	// SigmaSD is the SD of the per-network ratios (C_p/C_p,rand,k)/(L_p/L_p,rand,k), a spread
	// for σ (σ itself is taken from the means, as in the papers).
	SigmaSD        float64 `json:"sigma_sd"`
	SwapsPerEdge   float64 `json:"swaps_per_edge"`
	MinSwapsFrac   float64 `json:"min_swaps_fraction"` // lowest accepted/asked swap ratio over the K rewirings
	RandomNetworks int     `json:"random_networks"`
	// RandomPathLengthEstimated is true when the random networks' L_p are estimates from
	// RandomPathSources sampled BFS sources each; RandomPathLengthSE holds each estimate's
	// standard error, RandomPathLengthMeanSE that of their mean, and LambdaSE and SigmaSE the
	// errors they carry into λ and σ (sampling error only; SigmaSD is the spread over networks).
	RandomPathLengthEstimated bool      `json:"random_path_length_estimated"`
	RandomPathSources         int       `json:"random_path_length_sources"`
	RandomPathLengthSE        []float64 `json:"random_path_length_se"`
	RandomPathLengthMeanSE    float64   `json:"random_path_length_mean_se"`
	LambdaSE                  float64   `json:"lambda_se"`
	SigmaSE                   float64   `json:"sigma_se"`
}

// DegreeDistribution gathers the histogram and both fits. LogLikelihoodRatio is
// R = ln L_powerlaw − ln L_truncated on the common tail: negative favours the cut-off. The
// power law is the truncated law at λ = 0 (nested models), so 2(ln L_trunc − ln L_pl) is χ²
// with one degree of freedom under the power law, and PValue = P(χ²₁ ≥ −2R) (Clauset et al.
// 2009, §5.1 and Appendix C); a small PValue rejects the pure power law for the cut-off.
type DegreeDistribution struct {
	Histogram          DegreeHistogram      `json:"histogram"`
	PowerLaw           PowerLawFit          `json:"power_law"`
	Truncated          TruncatedPowerLawFit `json:"truncated_power_law"`
	LogLikelihoodRatio float64              `json:"log_likelihood_ratio"`
	PValue             float64              `json:"p_value"`
}

// DegreeHistogram is the degree distribution on logarithmic bins, for a log–log plot. Bin b
// holds the integer degrees lo_b ≤ k < hi_b; Density is the probability per unit degree,
// p(k) ≈ Counts[b] / (n · (hi_b − lo_b)), with n the number of nodes of degree ≥ 1 (degree 0 has
// no place on a log axis and is counted in Zero).
type DegreeHistogram struct {
	Lo      []int     `json:"lo"`
	Hi      []int     `json:"hi"`
	Centers []float64 `json:"centers"` // geometric centre √(lo·(hi−1)) of the degrees in the bin
	Counts  []int     `json:"counts"`
	Density []float64 `json:"density"`
	Zero    int       `json:"zero_degree_nodes"`
}

// PowerLawFit is the discrete power law p(k) = k^(−α) / ζ(α, k_min) for k ≥ k_min, fitted by
// maximum likelihood with k_min chosen to minimise the Kolmogorov–Smirnov distance between the
// fitted and the empirical tail distribution (Clauset, Shalizi & Newman, SIAM Review 51:661,
// 2009, §3.1 and §3.3). ζ(α, q) is the Hurwitz zeta function.
type PowerLawFit struct {
	Alpha         float64 `json:"alpha"`
	AlphaSE       float64 `json:"alpha_se"` // asymptotic standard error 1/√(n ψ′), eq. (3.6)'s discrete analogue
	Xmin          int     `json:"xmin"`
	NTail         int     `json:"n_tail"` // number of degrees ≥ k_min
	KS            float64 `json:"ks"`
	LogLikelihood float64 `json:"log_likelihood"`
}

// TruncatedPowerLawFit is the discrete power law with exponential cut-off,
// p(k) = k^(−α) e^(−λk) / Z(α, λ, k_min) for k ≥ k_min, fitted by maximum likelihood on the
// same tail as the power law (Clauset et al. 2009, §5).
type TruncatedPowerLawFit struct {
	Alpha         float64 `json:"alpha"`
	Lambda        float64 `json:"lambda"` // cut-off rate λ; the cut-off degree is 1/λ
	Xmin          int     `json:"xmin"`
	KS            float64 `json:"ks"`
	LogLikelihood float64 `json:"log_likelihood"`
}

// TruthCheck compares what the analysis found in the demo phantom with what was planted
// (metrics.json's demo_truth_check).
type TruthCheck struct {
	// Truth files, relative to the bundle.
	TruthModules string `json:"truth_modules"`
	TruthHubs    string `json:"truth_hubs"`

	PlantedModules int `json:"planted_modules"`
	// FoundModules counts the Leiden modules of at least 2 nodes; FoundSingletons the nodes
	// left in a module of their own (isolated nodes, mostly). Absent with metrics "none".
	FoundModules    *int `json:"found_modules,omitempty"`
	FoundSingletons *int `json:"found_single_nodes,omitempty"`
	// NMI is the normalised mutual information between the planted modules and the Leiden
	// modules over every node (community.NormalizedMutualInformation; 1 = identical).
	NMI *float64 `json:"nmi,omitempty"`

	PlantedHubs int `json:"planted_hubs"`
	// TopDegreeHits: planted hubs among the PlantedHubs nodes of highest degree (ties by node
	// number); TopDegreeRecall = TopDegreeHits / PlantedHubs.
	TopDegreeHits   int     `json:"planted_hubs_in_top_degree"`
	TopDegreeRecall float64 `json:"top_degree_recall"`
	// RuleHits: planted hubs the hub rule flags (degree > mean + k SD); RuleHubs: every node it
	// flags; RuleRecall = RuleHits / PlantedHubs.
	RuleHits   int     `json:"planted_hubs_under_rule"`
	RuleHubs   int     `json:"hubs_under_rule"`
	RuleRecall float64 `json:"hub_rule_recall"`
}

// NoFit reports whether the fitted exponent ran to a bound of FitPowerLaw's search (1, 20]:
// the tail falls off faster than any power law (α → 20) or not at all (α → 1), so the "fit" is
// no description of the degrees.
func (f PowerLawFit) NoFit() bool { return f.Alpha >= 19.99 || f.Alpha <= 1.001 }

// NoFit reports whether the truncated law describes no heavy tail: with α < 0, k^(−α) rises
// with k and the fitted law is a bump peaking at k = −α/λ, held down by the cut-off — the
// degrees are peaked around a typical value.
func (f TruncatedPowerLawFit) NoFit() bool { return f.Alpha < 0 }

// NoCutOff reports whether the cut-off lies far beyond the largest degree kmax (λ·kmax < 10⁻³,
// so e^(−λk) stays within 0.1 % of 1 over the data): the truncated law then coincides with a
// pure power law.
func (f TruncatedPowerLawFit) NoCutOff(kmax int) bool { return f.Lambda*float64(kmax) < 1e-3 }
