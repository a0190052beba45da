#!/usr/bin/env bash
# Installs the system packages HubScope needs, only those that are missing.
# Idempotent and quiet when everything is present. Usage: scripts/setup-deps.sh [demo|test|gui|cuda]...
set -euo pipefail

want=(ca-certificates gcc libc6-dev pkg-config make git)
for profile in "${@:-test}"; do
  case "$profile" in
    demo) ;;
    test) want+=(python3 python3-numpy python3-scipy python3-nibabel python3-igraph python3-networkx nifti-bin) ;;
    gui)  want+=(libgl1-mesa-dev libx11-dev libxcursor-dev libxrandr-dev libxinerama-dev libxi-dev libxxf86vm-dev xvfb xauth imagemagick x11-utils) ;;
    cuda) want+=(nvidia-cuda-dev) ;;
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
for p in "${missing[@]}"; do
  if [ "$p" = nvidia-cuda-dev ]; then
    # CUDA headers live in Debian's non-free component (see ../shared/env/TOOLCHAIN.md).
    if ! grep -rqs "non-free" /etc/apt/sources.list /etc/apt/sources.list.d/ 2>/dev/null; then
      . /etc/os-release
      if [ "${ID:-}" = debian ]; then
        echo "deb http://deb.debian.org/debian ${VERSION_CODENAME} contrib non-free" | $SUDO tee /etc/apt/sources.list.d/hubscope-nonfree.list >/dev/null
      else
        $SUDO sed -i 's/^Components: main.*/Components: main restricted universe multiverse/' /etc/apt/sources.list.d/ubuntu.sources 2>/dev/null || true
      fi
    fi
  fi
done
echo "setup-deps: installing ${missing[*]}" >&2
$SUDO apt-get update -qq >/dev/null
$SUDO apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
