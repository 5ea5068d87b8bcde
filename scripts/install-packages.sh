#!/usr/bin/env bash
# Installs the Debian packages of .ci/apt-packages that are missing (the one list; both README
# commands run this first). Usage: scripts/install-packages.sh examples|tests
#   examples: what building irkit and scripts/examples.sh need (lines without `# tests-only`)
#   tests:    every line
# As root it runs apt-get; otherwise sudo apt-get (asking for a password only on a terminal).
# Where neither can install, it stops at once naming the packages and the command to run.
# IRKIT_SKIP_PACKAGES=1 skips the step (for machines whose packages are managed otherwise).
set -euo pipefail
cd "$(dirname "$0")/.."
purpose=${1:-tests}
case "$purpose" in examples|tests) ;; *) echo "usage: $0 examples|tests" >&2; exit 2 ;; esac
[ "${IRKIT_SKIP_PACKAGES:-0}" = 1 ] && exit 0

wanted=()
while IFS= read -r line; do
  name=${line%%#*}
  name=${name//[[:space:]]/}
  [ -n "$name" ] || continue
  if [ "$purpose" = examples ] && [[ "$line" == *"# tests-only"* ]]; then continue; fi
  wanted+=("$name")
done < .ci/apt-packages

if ! command -v dpkg-query >/dev/null 2>&1; then
  echo "error: irkit's setup installs Debian packages, and this machine has no dpkg." >&2
  echo "Install the equivalents of: ${wanted[*]}" >&2
  echo "then run again with IRKIT_SKIP_PACKAGES=1." >&2
  exit 1
fi

missing=()
for p in "${wanted[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q 'install ok installed' || missing+=("$p")
done
[ ${#missing[@]} -eq 0 ] && exit 0

install_cmd=(apt-get install -y -q --no-install-recommends "${missing[@]}")
if [ "$(id -u)" -eq 0 ]; then
  sudo=()
elif command -v sudo >/dev/null 2>&1 && { sudo -n true 2>/dev/null || [ -t 0 ]; }; then
  sudo=(sudo)
else
  echo "error: these Debian packages are missing, and this script can neither run apt-get as" >&2
  echo "root nor use sudo: ${missing[*]}" >&2
  echo "Install them, then run the command again:" >&2
  echo "  sudo apt-get update && sudo ${install_cmd[*]}" >&2
  exit 1
fi
echo "installing Debian packages: ${missing[*]}" >&2
export DEBIAN_FRONTEND=noninteractive
"${sudo[@]}" env DEBIAN_FRONTEND=noninteractive apt-get update -q >&2
"${sudo[@]}" env DEBIAN_FRONTEND=noninteractive "${install_cmd[@]}" >&2
