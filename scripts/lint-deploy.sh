#!/usr/bin/env bash
# Lints the deployment files that cannot be run here (no container engine, no cluster):
# the Dockerfile with dockerfile-utils, the compose file and Kubernetes manifests with yamllint.
set -euo pipefail
cd "$(dirname "$0")/.."
findings=$(npx --no-install dockerfile-utils lint Dockerfile 2>/dev/null)
if [ -n "$findings" ]; then
  printf 'Dockerfile:\n%s\n' "$findings" >&2
  exit 1
fi
yamllint -s -c deploy/.yamllint.yaml deploy/
