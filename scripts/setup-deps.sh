#!/usr/bin/env bash
# Installs the system packages HubScope needs, only those that are missing.
# Idempotent and quiet when everything is present. Usage: scripts/setup-deps.sh [demo|test|gui|cuda]...
set -euo pipefail

want=(ca-certificates gcc libc6-dev pkg-config make git)
for profile in "${@:-test}"; do
  case "$profile" in
    demo) want+=(dcm2niix) ;;
    test) want+=(munge slurm-wlm dcm2niix python3 python3-numpy python3-scipy python3-nibabel python3-igraph python3-networkx python3-dipy python3-sklearn python3-pandas nifti-bin mricron-data) ;;
    gui)  want+=(libgl1-mesa-dev libx11-dev libxcursor-dev libxrandr-dev libxinerama-dev libxi-dev libxxf86vm-dev xvfb xauth imagemagick xdotool x11-utils) ;;
    cuda) want+=(nvidia-cuda-dev) ;;
    web)  want+=(chromium) ;;
    *) echo "setup-deps: unknown profile $profile" >&2; exit 2 ;;
  esac
done

missing=()
for p in "${want[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done

# Go toolchain: use the one on PATH if it is new enough, else fail with a clear message.
if ! command -v go >/dev/null 2>&1 && [ -x /usr/local/go/bin/go ]; then export PATH=/usr/local/go/bin:$PATH; fi
if ! command -v go >/dev/null 2>&1; then
  missing+=(golang-go)
fi

[ ${#missing[@]} -eq 0 ] && exit 0

SUDO=""
[ "$(id -u)" -ne 0 ] && SUDO="sudo"
export DEBIAN_FRONTEND=noninteractive
# CUDA headers (nvidia-cuda-dev) live in Debian's non-free component and Ubuntu's multiverse
# (README.md, "Set-up: two commands"). Enable that component on the archive this machine
# already uses, copying its own apt entry, so no mirror is hard-coded here.
enable_nonfree() {
  . /etc/os-release
  if [ "${ID:-}" = ubuntu ]; then
    grep -rqs "multiverse" /etc/apt/sources.list /etc/apt/sources.list.d/ && return 0
    $SUDO sed -i -E 's/^(Components:.*)$/\1 universe multiverse/' /etc/apt/sources.list.d/ubuntu.sources 2>/dev/null || true
    return 0
  fi
  grep -rqsE "^[^#]*(Components:.*|deb .*) non-free( |$)" /etc/apt/sources.list /etc/apt/sources.list.d/ && return 0
  local uri
  uri=$(grep -hE "^URIs:" /etc/apt/sources.list.d/debian.sources 2>/dev/null | grep -v security | head -1 | awk '{print $2}')
  [ -n "$uri" ] || uri=$(grep -hE "^deb " /etc/apt/sources.list 2>/dev/null | grep -v security | head -1 | awk '{print $2}')
  [ -n "$uri" ] || { echo "setup-deps: cannot find the Debian archive in apt's sources to add non-free" >&2; return 1; }
  printf 'Types: deb\nURIs: %s\nSuites: %s\nComponents: contrib non-free\nSigned-By: /usr/share/keyrings/debian-archive-keyring.gpg\n' \
    "$uri" "${VERSION_CODENAME}" | $SUDO tee /etc/apt/sources.list.d/hubscope-nonfree.sources >/dev/null
}
for p in "${missing[@]}"; do
  [ "$p" = nvidia-cuda-dev ] && enable_nonfree
done
echo "setup-deps: installing ${missing[*]}" >&2
$SUDO apt-get update -qq >/dev/null
$SUDO apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
