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

// Atlas holds the AAL atlas in MNI space that names hub regions: atlas/aal.nii.gz (116 labelled
// regions, 1 mm grid) with its names atlas/aal.nii.txt ("index name code" per line), from
// Debian's mricron-data (see atlas/LICENSE-AAL.txt for the licence and the paper to cite).
//
//go:embed atlas
var Atlas embed.FS

// AtlasImage and AtlasNames are the paths of the AAL files inside Atlas.
const (
	AtlasImage = "atlas/aal.nii.gz"
	AtlasNames = "atlas/aal.nii.txt"
	// AtlasCitation is what a report names as the atlas's source.
	AtlasCitation = "AAL (Tzourio-Mazoyer et al., NeuroImage 15:273-289, 2002), from Debian mricron-data, BSD-3-clause"
)

// Template holds the MNI152 brain template that helper/register aligns a scan's mean EPI to:
// template/mni152_brain_4mm.nii.gz (ICBM 2009a T1 brain, 4 mm), and the same brain at 2 mm that
// the helper serves as the anatomy behind the app's slices, template/mni152_t1_brain_2mm.nii.gz
// (see template/LICENSE-MNI152-ICBM2009a.txt).
//
//go:embed template
var Template embed.FS

// TemplateImage is the path of the brain template inside Template.
const TemplateImage = "template/mni152_brain_4mm.nii.gz"

// DisplayTemplateImage is the path of the 2 mm display template inside Template.
const DisplayTemplateImage = "template/mni152_t1_brain_2mm.nii.gz"
