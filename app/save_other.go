//go:build !js

package app

// cannotSave is empty where the app can save files (see save_js.go).
const cannotSave = ""
