package assets

import _ "embed"

// Icon is HubScope's application icon (256×256 PNG): a hub linking four modules.
//
//go:embed icon.png
var Icon []byte
