#!/usr/bin/env bash
# Proves that the README's first command works on a really fresh machine: a minimal Debian 12
# root made by debootstrap (cached as a pristine copy under $FRESH_WORK, default
# /var/tmp/irkit-fresh), with nothing added but this machine's Rust toolchain (bind-mounted
# read-only) and a clone of the repository (and ../shared beside it when present). No LLVM,
# Mesa, Chromium or compiler from this machine is visible inside, so the command succeeds only
# if it installs what it needs itself.
#
# Two runs, in a fresh copy of the root each:
#   1. as an ordinary user without sudo: `bash scripts/examples.sh` must stop at once (exit 1)
#      with one message naming the missing packages and the command to run;
#   2. as root: `bash scripts/examples.sh` must install the packages, build and exit 0.
# Prints the first and last lines of each transcript and the time taken.
#
# Usage (as root, on Debian or Ubuntu with network access to the Debian archive):
#   scripts/fresh-machine-check.sh [CLONE]     (default: a clone of this repository's HEAD)
set -euo pipefail
repo=$(cd "$(dirname "$0")/.." && pwd)
source_repo=${1:-$repo}
work=${FRESH_WORK:-/var/tmp/irkit-fresh}
if [ "$(id -u)" -ne 0 ]; then
  echo "fresh-machine-check: needs root (debootstrap, chroot, mounts)" >&2
  exit 2
fi
command -v debootstrap >/dev/null || {
  echo "fresh-machine-check: installing debootstrap" >&2
  DEBIAN_FRONTEND=noninteractive apt-get install -y -q debootstrap >&2
}
rustup_home=${RUSTUP_HOME:-$HOME/.rustup}
cargo_home=${CARGO_HOME:-$HOME/.cargo}
mkdir -p "$work"
base=$work/base
if [ ! -e "$base/.complete" ]; then
  rm -rf "$base"
  echo "fresh-machine-check: making a minimal Debian 12 root (debootstrap --variant=minbase)" >&2
  debootstrap --variant=minbase --include=ca-certificates,git bookworm "$base" \
    http://deb.debian.org/debian >"$work/debootstrap.log" 2>&1 || {
    tail -20 "$work/debootstrap.log" >&2
    exit 2
  }
  # The same archive sections as a normal Debian 12 install: main, updates, security.
  rm -f "$base/etc/apt/sources.list"
  cat >"$base/etc/apt/sources.list.d/debian.sources" <<'SOURCES'
Types: deb
URIs: http://deb.debian.org/debian
Suites: bookworm bookworm-updates
Components: main
Signed-By: /usr/share/keyrings/debian-archive-keyring.gpg

Types: deb
URIs: http://deb.debian.org/debian-security
Suites: bookworm-security
Components: main
Signed-By: /usr/share/keyrings/debian-archive-keyring.gpg
SOURCES
  chroot "$base" useradd -m -s /bin/bash newcomer
  touch "$base/.complete"
fi

run=$work/run
mounted=()
cleanup() {
  for ((i = ${#mounted[@]} - 1; i >= 0; i--)); do umount -l "${mounted[$i]}" 2>/dev/null || true; done
  mounted=()
}
trap cleanup EXIT
fresh_root() {
  cleanup
  rm -rf "$run"
  cp -a "$base" "$run"
  cp /etc/resolv.conf "$run/etc/resolv.conf"
  mkdir -p "$run/opt/rust/rustup" "$run/opt/rust/cargo" "$run/work"
  mount -t proc proc "$run/proc" && mounted+=("$run/proc")
  mount --rbind /dev "$run/dev" && mounted+=("$run/dev")
  mount --rbind /sys "$run/sys" && mounted+=("$run/sys")
  # Rust only: the toolchain read-only, and cargo's registry cache (downloads) writable.
  mount --bind "$rustup_home" "$run/opt/rust/rustup" && mount -o remount,bind,ro "$run/opt/rust/rustup"
  mounted+=("$run/opt/rust/rustup")
  mount --bind "$cargo_home" "$run/opt/rust/cargo" && mounted+=("$run/opt/rust/cargo")
  git clone -q "$source_repo" "$run/work/irkit"
  if [ -d "$repo/../shared" ]; then cp -a "$repo/../shared" "$run/work/shared"; fi
  chown -R 1000:1000 "$run/work" 2>/dev/null || true
}
in_root() { # USER COMMAND: a login-like clean environment with Rust on PATH
  local user=$1
  shift
  chroot --userspec="$user" "$run" /usr/bin/env -i HOME="$(chroot "$run" getent passwd "${user%%:*}" | cut -d: -f6)" \
    PATH=/opt/rust/cargo/bin:/usr/local/bin:/usr/bin:/bin RUSTUP_HOME=/opt/rust/rustup \
    CARGO_HOME=/opt/rust/cargo TERM=dumb LANG=C.UTF-8 bash -c "$*"
}
report() { # NAME LOG STATUS SECONDS
  echo "== $1: exit $3 after $4 s; transcript $2"
  echo "   first lines:"
  head -n 3 "$2" | sed 's/^/     | /'
  echo "   last lines:"
  tail -n 5 "$2" | sed 's/^/     | /'
}

# 1. An ordinary user who can neither be root nor use sudo: stops at once, naming the packages.
fresh_root
log1=$work/unprivileged.log
start=$(date +%s)
status=0
in_root newcomer:newcomer "cd /work/irkit && bash scripts/examples.sh" >"$log1" 2>&1 || status=$?
report "examples.sh as a user without sudo" "$log1" "$status" "$(($(date +%s) - start))"
if [ "$status" -ne 1 ] || ! grep -q 'llvm-19-dev' "$log1" || ! grep -q 'apt-get install' "$log1"; then
  echo "FAIL: expected exit 1 with a message naming the packages and the install command" >&2
  exit 1
fi

# 2. root on the fresh root: installs, builds, runs every example.
fresh_root
log2=$work/root.log
start=$(date +%s)
status=0
in_root 0:0 "cd /work/irkit && nice -n 5 bash scripts/examples.sh" >"$log2" 2>&1 || status=$?
report "examples.sh as root" "$log2" "$status" "$(($(date +%s) - start))"
if [ "$status" -ne 0 ]; then
  echo "FAIL: scripts/examples.sh did not succeed on a fresh machine" >&2
  exit 1
fi
echo "fresh-machine-check: both runs behaved as the README says"
