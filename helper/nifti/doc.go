// Package nifti reads NIfTI-1 and NIfTI-2 images (.nii, .nii.gz, .hdr/.img pairs, .img.gz)
// and writes NIfTI-1 (.nii or .nii.gz). It is the only package that knows the byte layout.
//
// The header is validated completely before any data is touched or any buffer sized from it
// is allocated: dimensions, datatype, bitpix, offsets, and the claimed data size against the
// file's real size (for gzip, against what the stream actually yields), so a 348-byte header
// can never make us allocate terabytes.
//
// Data are read as a stream of 3D volumes, in file order, scaled by scl_slope/scl_inter
// (NIfTI-1 §"scl_slope": a slope of 0 means no scaling). Geometry follows nibabel: the
// voxel→world affine is the sform when its code is set, else the qform
// (Header.Affine, Header.SformAffine, Header.QformAffine).
//
// Every error names the file and the problem ("open x.nii.gz: truncated header: got 120 of
// 348 bytes") and wraps one of the Err… values for errors.Is.
package nifti
