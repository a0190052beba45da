// Package bundle writes the results of one HubScope analysis to disk, as a directory that
// appears only when complete, and reads its network back. It does I/O only: every value it
// writes was computed elsewhere.
//
// # The results bundle
//
// `hubscope-helper run SCAN --out DIR` (and every analysis started from the app) writes one
// directory DIR. It is written under a temporary name beside it, `.DIR.partial-XXXX`, and
// renamed to DIR only once every file is complete and flushed to disk, so a DIR that exists is
// never half-written. A crash or Ctrl-C leaves at most the `.partial-` directory, which the next
// run with the same DIR removes. A run never replaces an existing DIR unless overwriting was
// asked for, and then only a directory that is itself a bundle (it holds the marker file
// `.hubscope-bundle`) or is empty.
//
// Nodes are the masked voxels (or, for a plain time-series matrix, its rows), numbered from 0 in
// the order of nodes.tsv: increasing flat voxel index i + Nx·(j + Ny·k), NIfTI's storage order.
// Every table and array below uses these node numbers. Maps are NIfTI-1 images on the scan's own
// voxel grid with the scan's affine (sform and qform both set to it), holding each node's value at
// its voxel and 0 outside the mask; they overlay the input scan in any viewer (fsleyes, MRIcroGL,
// nilearn).
//
// The files (what each holds, then how to open it; every map also opens in FSLeyes, MRIcroGL
// or NiiVue over the scan):
//
//   - network.npz: the thresholded network: N×N sparse matrix in CSR form holding the strict upper
//     triangle (i < j) of the connectivity matrix; values are the connection weights (Pearson r,
//     Spearman ρ or Kendall τ-b, or their absolute values when asked for), float32. Written
//     exactly as scipy.sparse.save_npz writes a csr_matrix: indices and indptr int32 (int64 when N
//     or the edge count reach 2³¹), data float32, shape int64, format b'csr'. Open with: A =
//     scipy.sparse.load_npz("network.npz"); the symmetric matrix is A + A.T;
//     networkx.from_scipy_sparse_array(A + A.T); igraph.Graph.Weighted_Adjacency(A, mode="upper").
//     With run --symmetric-npz it holds the whole symmetric matrix instead (both (i, j) and
//     (j, i); do not add A.T), which ReadNetwork also reads.
//   - network.json: which of the two network.npz holds: matrix ("upper" or "symmetric"), shape,
//     edges, stored_entries, and a note saying how to get the symmetric matrix. Open with: json.
//   - edges.tsv: the same edges as a table, only when there are at most 10⁶ of them: columns i, j
//     (node numbers, i < j), weight. Open with: pandas.read_csv("edges.tsv", sep="\t").
//   - nodes.tsv: one row per node: node, voxel indices i, j, k (0-based) and world coordinates
//     x_mm, y_mm, z_mm (mm, through the scan's affine); for a plain matrix node and label. Open
//     with: pandas.read_csv("nodes.tsv", sep="\t").
//   - degree.nii.gz: degree k_i: number of edges of each node. Open with:
//     nibabel.load("degree.nii.gz").get_fdata().
//   - strength.nii.gz: strength s_i: sum of the node's edge weights (same units as the weights).
//     Open with: nibabel.
//   - hubs.nii.gz: 1 at hub nodes, 0 elsewhere (uint8). Open with: nibabel.
//   - hub_z.nii.gz: the hub score as a z-score over nodes (dimensionless). Open with: nibabel.
//   - hubs.tsv: one row per hub: node, i, j, k, x_mm, y_mm, z_mm, degree, strength, hub_z, then
//     x_mni, y_mni, z_mni (the hub's MNI position through the registration) when the scan was
//     registered to MNI space, and atlas_label (region, "" outside every region) when an atlas
//     names the hubs: --atlas, else the embedded AAL when the scan lies in MNI space (registered,
//     or so by its header and grid; metrics.json's hubs.atlas, hubs.regions and hubs.unnamed
//     say which atlas, the regions holding the most hubs, or why none named them); for a plain matrix
//     node, label, degree, strength, hub_z. Open with: pandas.read_csv("hubs.tsv", sep="\t").
//   - network.graphml, network.gexf: the network for networkx (read_graphml, read_gexf), Gephi
//     and Cytoscape: node ids are the node numbers, each edge once with its weight, node
//     attributes x, y, z (mm; MNI through the registration when there is one), module (as in
//     modules.nii.gz), degree, strength, hub (boolean) and atlas_label. Written by default up
//     to 100,000 edges, or whenever asked for (run --export graphml,gexf).
//   - hubs.node: BrainNet Viewer's node file of the hubs, in hubs.tsv's order: x y z colour
//     (module) size (degree) label (atlas region, spaces as _, "-" for none); and, for networks
//     of at most 1,000 nodes, network.node and network.edge (the symmetric weight matrix); for
//     a voxel network of at most 1,000 hubs, hubs.edge (the weight matrix among the hubs, in
//     hubs.node's order). Open with: BrainNet Viewer (File → Load file), or numpy.loadtxt.
//   - hub_links.tsv: the 2,000 strongest links among the hubs (by |weight|), strongest first:
//     hub_a < hub_b (rows of hubs.tsv, from 0), node_a, node_b (node numbers), weight; what the
//     app's connectome view draws (written with the BrainNet export, whatever the number of
//     hubs). Open with: pandas.read_csv("hub_links.tsv", sep="\t").
//   - modules.nii.gz: module (community) number of each node, 1…M; 0 outside the mask; a label
//     image (intent NIFTI_INTENT_LABEL), so viewers colour it by category. Open with: nibabel
//     (header.get_intent() gives "label").
//   - modules_dseg.tsv: the label table of modules.nii.gz, as BIDS's discrete segmentations
//     have: index (1…M), name (module_M), color (#rrggbb, the app's module colour). Open with:
//     pandas; FSLeyes and NiiVue read it as a lookup table.
//   - clustering.nii.gz: clustering coefficient C_i ∈ [0, 1]. Open with: nibabel.
//   - efficiency.nii.gz: local efficiency E_loc,i ∈ [0, 1]: global efficiency of the subgraph of
//     i's neighbours (Latora & Marchiori; full metrics). Open with: nibabel.
//   - eigenvector.nii.gz: eigenvector centrality, scaled to a maximum of 1 (full metrics). Open
//     with: nibabel.
//   - participation.nii.gz: participation coefficient P_i ∈ [0, 1) of the node across modules.
//     Open with: nibabel.
//   - within_module_z.nii.gz: within-module degree z-score (Guimerà & Amaral). Open with: nibabel.
//   - betweenness.nii.gz: betweenness centrality (only when asked for: it is costly). Open with:
//     nibabel.
//   - metrics.json: whole-network measures: N, E, density, threshold, mean clustering C_p,
//     characteristic path length L_p, global efficiency, modularity Q, small-world γ, λ, σ and
//     their random-network references; null where a measure is undefined. Open with:
//     json.load(open("metrics.json")).
//   - provenance.json: what produced the bundle: input path and SHA-256 (same as sha256sum), every
//     parameter, backend (cpu/cuda), CPU and GPU model, OS, timings per stage in seconds, HubScope
//     version. Open with: json.
//   - degree_distribution.png: log–log plot of the degree distribution P(k) (fraction of nodes
//     with degree k) with the fitted power-law and exponentially truncated power-law curves. Open
//     with: any image viewer.
//   - series.npy: the cleaned N×L float32 series, one row per node in the order of nodes.tsv (only
//     when the series are kept: run --keep-series, and every analysis started from the app). Open
//     with: numpy.load("series.npy").
//   - mean.nii.gz: temporal mean of the scan on its whole grid, float32 (kept with the series):
//     the background of slice views. Open with: nibabel.
//   - dfc/…: per-window results of dynamic connectivity, when windows were asked for. Open with:
//     as above.
//   - input/series_N.nii, input/series_N.json: with DICOM input (a folder, .zip or DICOMDIR),
//     the analysed series as dcm2niix converted it and its anonymised BIDS sidecar
//     (RepetitionTime, SliceTiming; no patient identity), so the run can be repeated without the
//     DICOM; provenance.json's "conversion" says which series, why, and which dcm2niix
//     (docs/dicom.md). Open with: nibabel; json.
//   - sweep.tsv, sweep.json, sweep.png, sweep.svg, hub_stability.nii.gz, sweep_degree_<t>.nii.gz:
//     with --sweep, every threshold's measures (one row each, then "auc": the area under each
//     measure's curve by the trapezoid rule), the curves, the share of thresholds at which each
//     voxel is a hub (float32, 0–1) and each threshold's degree map. Open with: pandas; nibabel.
//   - group.json: a group-mean network's subjects (path, bytes, SHA-256), mean (fisher-z or r),
//     mask rule and what it kept. Open with: json.
//   - z_<map>.nii.gz, hubs_lost.nii.gz, hubs_gained.nii.gz, norm_clusters.tsv, norm_comparison.json: with
//     --norm, the run's z against the normative cohort (0 where not compared), the cohort hubs it
//     lost (z < −2) and the hubs it gained (uint8 0/1), the clusters of |z| > 2 (sign, size, peak
//     voxel and mm, atlas region) and the counts, per sweep threshold too. Open with: nibabel,
//     pandas, json.
//   - .hubscope-bundle: marker: this directory is a HubScope bundle (may be replaced by a later
//     run).
//   - demo/: with run --demo, the phantom that was analysed (phantom.nii.gz), the mask it used
//     (mask.nii.gz, the embedded MNI152 brain mask on the phantom's grid) and its ground truth:
//     phantom_truth_modules.nii.gz (planted module of every voxel) and phantom_truth_hubs.tsv
//     (planted hubs: node, i, j, k, x, y, z, modules they couple); metrics.json's demo_truth_check
//     compares the result with them. Open with: nibabel, pandas.
//
// Tables are UTF-8, tab-separated, with one header line; numbers are plain decimals (weights
// with the fewest digits that read back as the same float32, coordinates to 0.001 mm), so
// `numpy.genfromtxt(path, delimiter="\t", names=True)` reads them as well as pandas does.
//
// Reading a bundle in Python:
//
//	import json, nibabel as nib, pandas as pd, scipy.sparse as sp
//	A = sp.load_npz("DIR/network.npz")          # strict upper triangle, float32
//	W = A + A.T                                 # symmetric weighted adjacency
//	nodes = pd.read_csv("DIR/nodes.tsv", sep="\t")
//	deg = nib.load("DIR/degree.nii.gz")         # deg.affine is the scan's affine
//	metrics = json.load(open("DIR/metrics.json"))
package bundle
