#!/usr/bin/env bash
# Makes sure Apache Kafka's server jars are in .cache/kafka/<version>/libs and prints that folder.
# Installs a Java runtime and Maven through apt when missing, then lets Maven copy the version
# pinned in pom.xml (with its dependencies) from Maven Central; later runs find the folder complete
# and return at once. Safe to run from several processes at once.
set -euo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
root="$(cd "$here/../.." && pwd)"
version="$(sed -n 's:.*<kafka.version>\(.*\)</kafka.version>.*:\1:p' "$here/pom.xml")"
dir="$root/.cache/kafka/$version"
libs="$dir/libs"
# The stamp holds the pom's hash: editing the pom (another version, another jar) fetches again.
want="$(sha256sum "$here/pom.xml" | cut -d' ' -f1)"

if [ -f "$dir/complete" ] && [ "$(cat "$dir/complete")" = "$want" ]; then
  echo "$libs"
  exit 0
fi

mkdir -p "$dir"
exec 9>"$dir.lock"
flock 9
if [ -f "$dir/complete" ] && [ "$(cat "$dir/complete")" = "$want" ]; then
  echo "$libs"
  exit 0
fi

# scripts/setup.sh installs these with the rest; this is for running the helper on its own.
missing=()
command -v java >/dev/null || missing+=(openjdk-17-jre-headless)
command -v mvn >/dev/null || missing+=(maven)
if [ ${#missing[@]} -gt 0 ]; then
  echo "kafka: installing ${missing[*]}" >&2
  as_root=(env DEBIAN_FRONTEND=noninteractive)
  if [ "$(id -u)" != 0 ]; then
    if ! command -v sudo >/dev/null; then
      echo "kafka: not root and no sudo; install ${missing[*]} by hand" >&2
      exit 1
    fi
    as_root=(sudo -n env DEBIAN_FRONTEND=noninteractive)
  fi
  if ! "${as_root[@]}" apt-get install -y -qq "${missing[@]}" >&2; then
    "${as_root[@]}" apt-get update -qq >&2
    "${as_root[@]}" apt-get install -y -qq "${missing[@]}" >&2
  fi
fi

echo "kafka: fetching Apache Kafka $version from Maven Central" >&2
rm -rf "$libs" "$libs.tmp"
mvn -q -B -f "$here/pom.xml" dependency:copy-dependencies -DoutputDirectory="$libs.tmp" >&2
mv "$libs.tmp" "$libs"
echo "$want" > "$dir/complete"
echo "$libs"
