#!/usr/bin/env bash
# Builds HubScope's browser app into bin/web (or $1): hubscope.wasm (the Fyne app built for
# GOOS=js GOARCH=wasm), Go's wasm_exec.js of the same toolchain (the two must match), the
# icon and an index.html that loads them. Serve it with
#   hubscope-helper serve --web 127.0.0.1:8765 --web-root bin/web
# and open the token URL it prints. The wasm link is heavy (about 40 MB, a minute or more on
# two cores); Go's build cache makes a rebuild without changes quick.
set -euo pipefail
cd "$(dirname "$0")/.."
if ! command -v go >/dev/null 2>&1 && [ -x /usr/local/go/bin/go ]; then export PATH=/usr/local/go/bin:$PATH; fi
out=${1:-bin/web}
mkdir -p "$out"

# wasm_exec.js moved from misc/wasm to lib/wasm in Go 1.24.
goroot=$(go env GOROOT)
exec_js=""
for d in "$goroot/lib/wasm" "$goroot/misc/wasm"; do
  [ -f "$d/wasm_exec.js" ] && { exec_js="$d/wasm_exec.js"; break; }
done
[ -n "$exec_js" ] || { echo "build-web: no wasm_exec.js under $goroot/lib/wasm or $goroot/misc/wasm" >&2; exit 1; }

# Build into a temporary name so that a failed build never leaves a half-written wasm that
# the helper would serve.
GOOS=js GOARCH=wasm go build -trimpath -o "$out/hubscope.wasm.tmp" ./cmd/hubscope
mv -f "$out/hubscope.wasm.tmp" "$out/hubscope.wasm"
cp -f "$exec_js" "$out/wasm_exec.js"
cp -f assets/icon.png "$out/icon.png"
version=$(sed -n 's/^const Version = "\(.*\)"/\1/p' ipc/schema/schema.go) # the product version (ipc/schema since 03d6210)

# The page: what `fyne package -os web` writes, reduced to what Fyne's web driver needs (a
# <body> to put its canvas in, and the dummyEntry input it focuses to raise a phone's
# keyboard), with the loading note replaced by the error when the app cannot start.
cat > "$out/index.html" <<HTML
<!DOCTYPE html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>HubScope ${version}</title>
<link rel="icon" type="image/png" href="icon.png">
<style>
  body { margin: 0; overflow: hidden; font-family: sans-serif; }
  #loading { position: fixed; inset: 0; display: flex; flex-direction: column;
             align-items: center; justify-content: center; gap: 12px; color: #333; }
  #loading img { width: 96px; height: 96px; }
  #loading .error { color: #b00020; max-width: 40em; text-align: center; }
</style>
<script src="wasm_exec.js"></script>
<script>
  function say(msg, isError) {
    const el = document.getElementById("action");
    el.textContent = msg;
    if (isError) { el.className = "error"; console.error("HubScope: " + msg); }
  }
  function start() {
    const canvas = document.createElement("canvas");
    if (!window.WebAssembly) { say("This browser cannot run WebAssembly; HubScope needs a current browser.", true); return; }
    if (!(canvas.getContext("webgl") || canvas.getContext("experimental-webgl"))) {
      say("This browser has WebGL turned off or unsupported; HubScope draws with WebGL.", true); return;
    }
    // Hide the loading note once Fyne has put its canvas on the page.
    const watch = new MutationObserver(() => {
      if (document.querySelector("body > canvas")) {
        document.getElementById("loading").style.display = "none";
        watch.disconnect();
      }
    });
    watch.observe(document.body, { childList: true });
    const go = new Go();
    say("Downloading HubScope…");
    WebAssembly.instantiateStreaming(fetch("hubscope.wasm"), go.importObject)
      .then((result) => { say("Starting HubScope…"); return go.run(result.instance); })
      .catch((err) => say("HubScope could not start: " + err, true));
  }
</script>
</head>
<body onload="start()">
<div id="loading">
  <img src="icon.png" alt="HubScope">
  <div>HubScope ${version}</div>
  <div id="action"><noscript>HubScope needs JavaScript.</noscript></div>
</div>
<input id="dummyEntry" style="position: absolute; left: 0; top: -100pt; z-index: -10; font-size: 32pt;">
</body>
</html>
HTML
echo "build-web: wrote $out (hubscope.wasm $(du -h "$out/hubscope.wasm" | cut -f1))"
