#!/usr/bin/env bash
# The whole test suite, from a fresh clone: setup, type check, lint and import boundaries,
# generated-code freshness, file paths named in words, the image (full run only), tests.
set -euo pipefail
cd "$(dirname "$0")/.."
source scripts/use-node.sh
bash scripts/setup.sh
echo "== Node $(node -v) ($(command -v node))" >&2
echo "== type check" >&2
npx tsc --noEmit -p .
npx tsc --noEmit -p packages/client
echo "== the client library builds (packages/client/dist/, what npm pack ships)" >&2
npm run --silent build --workspace packages/client
echo "== lint (eslint.config.js), formatting (.prettierrc.json) and import boundaries (.dependency-cruiser.cjs)" >&2
npm run --silent lint
echo "== generated types (resolvers, the dashboard's and the client library's operations) are up to date with schema/" >&2
if ! npx graphql-codegen --config codegen.yml --check >/dev/null 2>&1; then
  echo "src/graphql/schema/generated/, web/dashboard/gql/ or packages/client/src/gql/ is stale: run 'npm run codegen' and commit the result" >&2
  exit 1
fi
echo "== the client library's error codes (packages/client/src/service-error-codes.ts) are up to date with src/base/errors.ts" >&2
npx tsx scripts/client-error-codes.ts --check
echo "== the GraphQL schema breaks nothing of the last release unless the major version says so (scripts/check-schema.ts)" >&2
npx tsx scripts/check-schema.ts
echo "== the configuration reference (docs/configuration.md) is up to date with src/config/settings.ts" >&2
npx tsx scripts/config-reference.ts --check
echo "== the runtime dependencies' licences (docs/runtime-licences.md) are up to date and accepted" >&2
npx tsx scripts/runtime-licences.ts --check
echo "== every file a comment or a document names exists (scripts/check-paths.ts)" >&2
npx tsx scripts/check-paths.ts
echo "== deployment files lint" >&2
bash scripts/lint-deploy.sh
if [ $# -eq 0 ]; then
  echo "== benchmark harness, smoke mode (keeps it working; its figures mean nothing)" >&2
  npx tsx bench/run.ts --smoke >&2
fi
if [ $# -eq 0 ]; then
  # A Dockerfile that cannot build fails the run; test/deploy/image.test.ts boots what was built.
  echo "== the image builds (scripts/build-image.sh)" >&2
  RCS_IMAGE=$(bash scripts/build-image.sh)
  export RCS_IMAGE
fi
echo "== tests" >&2
npx vitest run "$@"
