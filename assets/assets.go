// Package assets embeds the files the applications ship with: the demo data (assets/demo) and,
// as others add them, templates, atlases and icons, each with its licence text beside it.
package assets

import "embed"

// Demo holds the files `make demo` and the phantom generator need, so they run with no data
// files present: demo/MNI152_T1_2mm_brain_mask.nii.gz and its 4 mm resampling
// demo/MNI152_T1_4mm_brain_mask.nii.gz (see demo/LICENSE-MNI152.txt).
//
//go:embed demo
var Demo embed.FS
