#!/usr/bin/env bash
# Installs what the project needs on a fresh machine, and nothing twice:
#  - npm dependencies, exactly as package-lock.json pins them (npm ci), when the lock file changed
#  - librdkafka-dev through apt when missing, and the mock Kafka cluster binary built from it
#  - yamllint through apt when missing (lints the deployment files)
#  - openssl through apt when missing (the secured-Kafka tests make their CA and certificates with it)
#  - kcat and a JDK through apt when missing (the tests produce compressed batches with kcat, which is
#    librdkafka, and with Kafka's own Java producer run from source)
#  - Apache Kafka's jars through Maven (a Java runtime and Maven through apt when missing), for the
#    tests and benchmarks that run on a real broker
set -euo pipefail
cd "$(dirname "$0")/.."

if ! command -v yamllint >/dev/null; then
  echo "setup: installing yamllint" >&2
  as_root=()
  if [ "$(id -u)" != 0 ] && command -v sudo >/dev/null; then as_root=(sudo); fi
  export DEBIAN_FRONTEND=noninteractive
  "${as_root[@]}" apt-get install -y -qq yamllint >&2 || { "${as_root[@]}" apt-get update -qq >&2 && "${as_root[@]}" apt-get install -y -qq yamllint >&2; }
fi

if ! command -v openssl >/dev/null; then
  echo "setup: installing openssl" >&2
  as_root=()
  if [ "$(id -u)" != 0 ] && command -v sudo >/dev/null; then as_root=(sudo); fi
  export DEBIAN_FRONTEND=noninteractive
  "${as_root[@]}" apt-get install -y -qq openssl >&2 || { "${as_root[@]}" apt-get update -qq >&2 && "${as_root[@]}" apt-get install -y -qq openssl >&2; }
fi

producers=()
command -v kcat >/dev/null || producers+=(kcat)
# The Java producer of the tests runs from source (java File.java), which needs the compiler of a JDK.
command -v javac >/dev/null || producers+=(openjdk-17-jdk-headless)
if [ ${#producers[@]} -gt 0 ]; then
  echo "setup: installing ${producers[*]}" >&2
  as_root=()
  if [ "$(id -u)" != 0 ] && command -v sudo >/dev/null; then as_root=(sudo); fi
  export DEBIAN_FRONTEND=noninteractive
  "${as_root[@]}" apt-get install -y -qq "${producers[@]}" >&2 || { "${as_root[@]}" apt-get update -qq >&2 && "${as_root[@]}" apt-get install -y -qq "${producers[@]}" >&2; }
fi

stamp=node_modules/.install-stamp
want=$(sha256sum package-lock.json | cut -d' ' -f1)
if [ ! -f "$stamp" ] || [ "$(cat "$stamp")" != "$want" ]; then
  echo "setup: installing npm dependencies (npm ci)" >&2
  npm ci --no-audit --no-fund >&2
  echo "$want" > "$stamp"
fi

bash tools/mock-cluster/build.sh >/dev/null
bash tools/kafka/fetch.sh >/dev/null
