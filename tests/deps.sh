#!/usr/bin/env bash
# Installs the Debian packages passfs needs to build and test.  Only missing
# packages are installed, so a second run costs nothing.  The CUDA toolkit is
# optional (found at /usr/local/cuda when present) and never installed here.
set -euo pipefail
pkgs=(build-essential cmake pkg-config libjansson-dev libfuse3-dev fuse3
      clang libclang-rt-14-dev python3 python3-torch
      # the tools tests/cli/mount_matrix.sh saves pass.c with
      rsync vim git patch
      # pgrep (tests that look for processes left behind), script (a pseudo-terminal)
      procps bsdutils
      # the Redis broker (engine/broker, tests/cli/broker_*.sh)
      libhiredis-dev redis-server
      # the browser that renders the report page (tests/cli/report.sh)
      chromium-headless-shell)
missing=()
for p in "${pkgs[@]}"; do
	dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
[ ${#missing[@]} -eq 0 ] && exit 0
sudo=""
[ "$(id -u)" -eq 0 ] || sudo=sudo
echo "passfs: installing ${missing[*]}" >&2
export DEBIAN_FRONTEND=noninteractive
$sudo apt-get install -y --no-install-recommends "${missing[@]}" ||
	{ $sudo apt-get update && $sudo apt-get install -y --no-install-recommends "${missing[@]}"; }
