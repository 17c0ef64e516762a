#!/usr/bin/env bash
# One command for a local run: a Kafka broker, the simulated external system and the service.
#   scripts/dev.sh           librdkafka's mock cluster (light, the default)
#   scripts/dev.sh --kafka   a real Apache Kafka node (KRaft), started and stopped with the stack
#   scripts/dev.sh --redis-cluster    the state in a local Redis Cluster (3 primaries, 3 replicas)
#   scripts/dev.sh --redis-sentinel   the state in a local Sentinel-managed Redis (1 primary, 1 replica)
#   KAFKA_BROKERS=host:9092 scripts/dev.sh   that cluster: no broker is started, missing topics are created
set -euo pipefail
cd "$(dirname "$0")/.."
source scripts/use-node.sh
bash scripts/setup.sh
exec npx tsx scripts/local-stack.ts "$@"
