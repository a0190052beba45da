// Package ipc holds what the HubScope app and its helper share across the process boundary:
// the product version and (with the IPC issue) the protocol types, the client and the server
// wiring. It imports only the standard library so the client also builds for js/wasm.
package ipc

// Version is the HubScope release, reported by the app, the helper and every results bundle.
const Version = "0.1.0"

// AppName is the product name shown to users.
const AppName = "HubScope"
