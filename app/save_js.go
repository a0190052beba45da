//go:build js

package app

// cannotSave says why the browser app saves no file: Fyne's web driver has no save dialog
// (its file dialogs are left to the browser, which it does not yet ask), so the Export tab's
// Save buttons say so instead of doing nothing.
const cannotSave = "The browser app cannot save files (Fyne's web driver has no save dialog). The results folder on the helper's machine holds the maps and tables; \"hubscope-helper report BUNDLE --pdf report.pdf\" there writes this report."
