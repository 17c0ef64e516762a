#!/usr/bin/env bash
# Makes sure Apache Kafka's server jars are in .cache/kafka/<version>/libs and prints that folder.
# Needs Java and Maven (scripts/setup.sh installs them), then lets Maven copy the version
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

# scripts/setup.sh installs Java and Maven with everything else (test.sh and dev.sh run it first).
for tool in java mvn; do
  if ! command -v "$tool" >/dev/null; then
    echo "kafka: $tool is missing; run scripts/setup.sh, which installs it" >&2
    exit 1
  fi
done

echo "kafka: fetching Apache Kafka $version from Maven Central" >&2
rm -rf "$libs" "$libs.tmp"
mvn -q -B -f "$here/pom.xml" dependency:copy-dependencies -DoutputDirectory="$libs.tmp" >&2
mv "$libs.tmp" "$libs"
echo "$want" > "$dir/complete"
echo "$libs"
