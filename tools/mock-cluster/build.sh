#!/usr/bin/env bash
# Builds the mock Kafka cluster binary into .cache/bin/ when missing or older than its source,
# installing librdkafka-dev through apt first when its header is missing. Prints the binary's path.
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
root="$(cd "$here/../.." && pwd)"
src="$here/mock-cluster.c"
bin="$root/.cache/bin/mock-cluster"

if [ ! -f /usr/include/librdkafka/rdkafka_mock.h ]; then
  echo "mock-cluster: installing librdkafka-dev" >&2
  as_root=()
  if [ "$(id -u)" != 0 ] && command -v sudo >/dev/null; then as_root=(sudo); fi
  export DEBIAN_FRONTEND=noninteractive
  if ! "${as_root[@]}" apt-get install -y -qq librdkafka-dev >&2; then
    "${as_root[@]}" apt-get update -qq >&2
    "${as_root[@]}" apt-get install -y -qq librdkafka-dev >&2
  fi
fi

if [ ! -x "$bin" ] || [ "$src" -nt "$bin" ]; then
  mkdir -p "$(dirname "$bin")"
  gcc -O2 -Wall -Wextra -o "$bin.tmp" "$src" -lrdkafka
  mv "$bin.tmp" "$bin"
fi
echo "$bin"
