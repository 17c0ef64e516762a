#!/usr/bin/env bash
# Installs what the project needs on a fresh Debian machine, and nothing twice:
#  - through apt, only what is missing, in one install:
#    - librdkafka-dev (the mock Kafka cluster is built from it) and yamllint (lints the deployment files)
#    - a JDK 17 and Maven: Apache Kafka's jars come through Maven, the broker runs on the JDK, and the
#      tests run Kafka's Java producer from source (which needs javac)
#    - kcat (the tests produce compressed batches with it) and openssl (the secured-Kafka tests make
#      their CA and certificates with it)
#    - chromium (Debian's): the browser tests drive it with playwright-core, which downloads no browser
#    - haproxy (Debian's): the client library's tests follow tests through it, in front of two replicas
#    - nftables (Debian's): the chaos run (and its smoke) cuts a replica off from Redis or Kafka with it
#    - redis-server, started on 127.0.0.1:6379, when nothing answers there and REDIS_URL is unset
#  - npm dependencies, exactly as package-lock.json pins them (npm ci), when the lock file changed
#  - the static builds of GraphiQL and the dashboard (npm run build:web, into dist/web/) when web/ or
#    the lock file changed
#  - the mock cluster binary, and Apache Kafka's jars (tools/kafka/fetch.sh)
#  - first of all, the Node.js line in .node-version when the machine's node is another one
#    (scripts/use-node.sh: from the npm registry into .cache/node/, nothing installed system-wide)
set -euo pipefail
cd "$(dirname "$0")/.."
source scripts/use-node.sh

missing=()
[ -f /usr/include/librdkafka/rdkafka_mock.h ] || missing+=(librdkafka-dev)
command -v yamllint >/dev/null || missing+=(yamllint)
command -v javac >/dev/null || missing+=(openjdk-17-jdk-headless)
command -v mvn >/dev/null || missing+=(maven)
command -v kcat >/dev/null || missing+=(kcat)
command -v openssl >/dev/null || missing+=(openssl)
[ -x /usr/bin/chromium ] || missing+=(chromium)
[ -x /usr/sbin/haproxy ] || missing+=(haproxy)
[ -x /usr/sbin/nft ] || missing+=(nftables)
redis_wanted=false
if [ -z "${REDIS_URL:-}" ] && ! (exec 3<>/dev/tcp/127.0.0.1/6379) 2>/dev/null; then
  redis_wanted=true
  command -v redis-server >/dev/null || missing+=(redis-server)
fi

if [ ${#missing[@]} -gt 0 ]; then
  echo "setup: installing ${missing[*]} through apt" >&2
  as_root=(env DEBIAN_FRONTEND=noninteractive)
  if [ "$(id -u)" != 0 ]; then
    if ! command -v sudo >/dev/null; then
      echo "setup: not root and no sudo; install these by hand: ${missing[*]}" >&2
      exit 1
    fi
    # -n: fail at once rather than wait for a password nobody will type (CI has no terminal).
    as_root=(sudo -n env DEBIAN_FRONTEND=noninteractive)
  fi
  # The package index is often current enough; refresh it only when the install needs it.
  if ! "${as_root[@]}" apt-get install -y -qq "${missing[@]}" >&2; then
    "${as_root[@]}" apt-get update -qq >&2
    "${as_root[@]}" apt-get install -y -qq "${missing[@]}" >&2
  fi
fi

# Kafka 4 brokers need Java 17 or later; an older default java would fail only at the first test.
java_major=$(java -version 2>&1 | sed -n 's/.* version "\([0-9]*\).*/\1/p' | head -1)
if [ -z "$java_major" ] || [ "$java_major" -lt 17 ]; then
  echo "setup: Apache Kafka 4 needs Java 17 or later, but 'java' is version ${java_major:-unknown}; choose a newer one with update-alternatives --config java" >&2
  exit 1
fi

if [ "$redis_wanted" = true ]; then
  echo "setup: starting redis-server on 127.0.0.1:6379 (in memory only)" >&2
  redis-server --daemonize yes --bind 127.0.0.1 --port 6379 --save "" --appendonly no >&2
fi

# The stamp names the Node version too: native addons built on another line would not load.
stamp=node_modules/.install-stamp
want=$( (cat package-lock.json; node -v) | sha256sum | cut -d' ' -f1)
if [ ! -f "$stamp" ] || [ "$(cat "$stamp")" != "$want" ]; then
  echo "setup: installing npm dependencies (npm ci)" >&2
  npm ci --no-audit --no-fund >&2
  echo "$want" > "$stamp"
fi

web_stamp=dist/web/.build-stamp
web_want=$( (cat package-lock.json; find web -type f | LC_ALL=C sort | xargs cat) 2>/dev/null | sha256sum | cut -d' ' -f1)
if [ ! -f "$web_stamp" ] || [ "$(cat "$web_stamp")" != "$web_want" ]; then
  echo "setup: building GraphiQL and the dashboard (npm run build:web)" >&2
  npm run --silent build:web >&2
  echo "$web_want" > "$web_stamp"
fi

bash tools/mock-cluster/build.sh >/dev/null
bash tools/kafka/fetch.sh >/dev/null
