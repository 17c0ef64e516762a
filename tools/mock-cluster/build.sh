#!/usr/bin/env bash
# Makes sure the mock Kafka cluster binary exists at .cache/bin/mock-cluster and prints its path.
# Installs librdkafka-dev through apt when its mock header is missing, and rebuilds only when
# mock-cluster.c is newer than the binary. Safe to run from several processes at once.
set -euo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
root="$(cd "$here/../.." && pwd)"
src="$here/mock-cluster.c"
bin="$root/.cache/bin/mock-cluster"
header=/usr/include/librdkafka/rdkafka_mock.h

mkdir -p "$(dirname "$bin")"

# Test workers start in parallel; one of them builds, the others wait and then find it fresh.
if command -v flock >/dev/null; then
  exec 9>"$root/.cache/mock-cluster.lock"
  flock 9
fi

if [ ! -f "$header" ]; then
  echo "mock-cluster: $header is missing; installing librdkafka-dev" >&2
  as_root=()
  if [ "$(id -u)" != 0 ]; then
    if command -v sudo >/dev/null; then
      as_root=(sudo)
    else
      echo "mock-cluster: not root and no sudo; install librdkafka-dev by hand" >&2
      exit 1
    fi
  fi
  export DEBIAN_FRONTEND=noninteractive
  # The package index is often current enough; refresh it only when the install needs it.
  if ! "${as_root[@]}" apt-get install -y librdkafka-dev >&2; then
    "${as_root[@]}" apt-get update >&2
    "${as_root[@]}" apt-get install -y librdkafka-dev >&2
  fi
fi

if [ ! -x "$bin" ] || [ "$src" -nt "$bin" ]; then
  # Build next to the target and rename, so nobody ever runs a half-written binary.
  tmp="$bin.$$.tmp"
  trap 'rm -f "$tmp"' EXIT
  gcc -O2 -Wall -o "$tmp" "$src" -lrdkafka
  mv -f "$tmp" "$bin"
fi

echo "$bin"
