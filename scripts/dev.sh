#!/usr/bin/env bash
# One command for a local run: a mock Kafka cluster, the simulated external system and the service.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh
exec npx tsx scripts/local-stack.ts "$@"
