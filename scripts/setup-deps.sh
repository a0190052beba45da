#!/usr/bin/env bash
# Installs the system packages HubScope needs, only those that are missing.
# Idempotent and quiet when everything is present. Usage: scripts/setup-deps.sh [demo|test|gui|cuda|web|bids]...
set -euo pipefail

# libdeflate-dev: the helper links its static libdeflate.a (helper/nifti/inflate_libdeflate.go)
# to inflate a .nii.gz in one call; the built program does not need the library.
want=(ca-certificates gcc libc6-dev pkg-config make git libdeflate-dev)
bids=0
for profile in "${@:-test}"; do
  case "$profile" in
    demo) want+=(dcm2niix) ;;
    test) want+=(munge slurm-wlm dcm2niix python3 python3-numpy python3-scipy python3-nibabel python3-igraph python3-networkx python3-dipy python3-sklearn python3-pandas nifti-bin mricron-data poppler-utils) ;;
    gui)  want+=(libgl1-mesa-dev libx11-dev libxcursor-dev libxrandr-dev libxinerama-dev libxi-dev libxxf86vm-dev xvfb xauth imagemagick xdotool x11-utils poppler-utils) ;;
    cuda) want+=(nvidia-cuda-dev) ;;
    web)  want+=(chromium) ;;
    bids) want+=(nodejs curl); bids=1 ;;
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

# The BIDS validator (bids profile), pinned: npm's bids-validator 1.15.0 is one esbuild bundle
# with its dependencies inside, so the registry's tarball is fetched once (20 MB, checked
# against the registry's sha512), unpacked without its source maps into the cache and run by
# Debian's nodejs; no npm and no node_modules tree are needed. HUBSCOPE_CACHE/bin/bids-validator
# is what make test runs (HUBSCOPE_BIDS_VALIDATOR).
BIDS_VALIDATOR_VERSION=1.15.0
BIDS_VALIDATOR_SHA512=819d145132c1b792f79ee84b89afd57ef2b939a334ca84c13c9bc6982e2c950f320f3a5a9d664e1c7052f8f02e6b4ae243b0b06b9d47111fc59ddf6fd7b30753
install_bids_validator() {
  [ "$bids" = 1 ] || return 0
  local cache="${HUBSCOPE_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/hubscope}"
  local dir="$cache/bids-validator-$BIDS_VALIDATOR_VERSION"
  if [ ! -x "$dir/package/bin/bids-validator" ]; then
    echo "setup-deps: fetching bids-validator $BIDS_VALIDATOR_VERSION into $dir" >&2
    mkdir -p "$cache"
    local tmp
    tmp=$(mktemp -d "$cache/.bids-validator.XXXXXX")
    curl -fsSL --retry 3 -o "$tmp/v.tgz" "https://registry.npmjs.org/bids-validator/-/bids-validator-$BIDS_VALIDATOR_VERSION.tgz"
    if ! echo "$BIDS_VALIDATOR_SHA512  $tmp/v.tgz" | sha512sum -c --quiet - >/dev/null; then
      echo "setup-deps: bids-validator-$BIDS_VALIDATOR_VERSION.tgz does not match its pinned sha512" >&2
      rm -rf "$tmp"; return 1
    fi
    tar -xzf "$tmp/v.tgz" -C "$tmp" --exclude='*.map' --exclude='package/dist/esm' --exclude='package/dist/validator'
    rm -f "$tmp/v.tgz"
    rm -rf "$dir" && mv "$tmp" "$dir"
  fi
  mkdir -p "$cache/bin"
  ln -sfn "$dir/package/bin/bids-validator" "$cache/bin/bids-validator"
}

[ ${#missing[@]} -eq 0 ] && { install_bids_validator; exit 0; }

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
install_bids_validator
