#!/usr/bin/env bash
# Lints the deployment files that cannot be run here (no container engine, no cluster, no promtool):
# the Dockerfile with dockerfile-utils, the compose file, Kubernetes manifests and Prometheus rules
# with yamllint, the rules' structure (scripts/check-alert-rules.py: every rule complete, every
# metric it names exported by src/telemetry/), and the Kubernetes manifests of both shapes
# against the Kubernetes API schemas, offline, with what operators expect of each Deployment
# (scripts/check-manifests.ts: probes, resources, security context, grace period, disruption budget).
set -euo pipefail
cd "$(dirname "$0")/.."
findings=$(npx --no-install dockerfile-utils lint Dockerfile 2>/dev/null)
if [ -n "$findings" ]; then
  printf 'Dockerfile:\n%s\n' "$findings" >&2
  exit 1
fi
yamllint -s -c deploy/.yamllint.yaml deploy/
# The Python yamllint runs on has PyYAML, whichever python3 comes first on PATH.
python=$(sed -n '1s/^#! *//p' "$(command -v yamllint)")
${python:-python3} scripts/check-alert-rules.py deploy/prometheus/alerts.yaml src/telemetry/*.ts
npx --no-install tsx scripts/check-manifests.ts
