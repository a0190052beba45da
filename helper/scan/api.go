// Package scan is HubScope's model of a resting-state scan: the masked voxels' time series as
// one voxel-major float32 matrix (row = voxel, contiguous series), the voxels' ijk positions,
// the voxel→world affine and TR. It builds the model straight from the NIfTI stream, volume by
// volume, so peak memory is the masked matrix plus a few volumes; it also builds masks (user
// mask on the same grid, or an automatic EPI mask as nilearn's compute_epi_mask does) and reads
// plain time-series matrices (CSV/TSV, .npy) for ROI-level networks.
package scan

// CONTRACT (fixed; other packages code against these names):
//
//   type Scan struct {
//       Data   []float32     // N×L row-major: series of node v is Data[v*L:(v+1)*L]
//       N, L   int
//       IJK    [][3]int32    // voxel position of node v (nil for a plain matrix input)
//       Dims   [3]int        // grid size (0,0,0 for a plain matrix)
//       Affine [4][4]float64 // voxel ijk → world mm
//       TR     float64       // seconds (0 when unknown)
//       Source string        // input path
//       Mask   Mask          // the final mask after dropping bad voxels (grid-sized, true = node)
//       Dropped DropStats
//       Labels []string      // node names for plain matrices (nil for images)
//   }
//   type Mask struct { Dims [3]int; In []bool } // In[i + Nx*(j + Ny*k)]
//   type DropStats struct { ZeroVariance, NonFinite int; MaskVoxels int }
//   func (s *Scan) Series(v int) []float32
//   func (s *Scan) World(v int) [3]float64                  // world mm of node v
//   func (s *Scan) NodeAt(i, j, k int) (int, bool)          // node index of a voxel
//   func VoxelToWorld(a [4][4]float64, ijk [3]float64) [3]float64
//   func WorldToVoxel(a [4][4]float64, xyz [3]float64) ([3]float64, error) // error if singular
//
//   type Options struct {
//       MaskPath string  // user mask; "" = automatic EPI mask
//       LowerCutoff, UpperCutoff float64 // compute_epi_mask fractions (defaults 0.2, 0.85)
//   }
//   func Load(ctx context.Context, path string, opt Options, rep progress.Reporter) (*Scan, error)
//       // NIfTI 4D (L ≥ 3), or a plain matrix by extension (.csv, .tsv, .txt, .npy: rows = regions).
//       // Errors name the file: "scan.nii.gz: 3D image where a 4D time series is needed".
//   func LoadMask(path string, ref nifti.Header) (Mask, error) // error if grid or affine differs > 1e-3 mm
//   func EPIMask(mean []float32, dims [3]int, lower, upper float64) Mask
