# syntax=docker/dockerfile:1
# Multi-stage build: compile TypeScript with dev dependencies, ship production dependencies only.
# NODE_VERSION is .node-version, the one place the project names its Node.js line (the tests run on
# it; test/tools/runtime.test.ts fails when the two differ). docs/operations.md, "Node.js versions".
ARG NODE_VERSION=26.10.0

FROM node:${NODE_VERSION}-bookworm-slim AS build
WORKDIR /app
COPY package.json package-lock.json ./
# The client library is a workspace of the root: the dashboard imports it by its package name.
COPY packages/client/package.json ./packages/client/
RUN npm ci --no-audit --no-fund
COPY tsconfig.json tsconfig.build.json codegen.yml ./
COPY schema ./schema
COPY src ./src
COPY web ./web
# The codegen check reads the client library's operations; the dashboard imports the library too.
COPY packages ./packages
# dist/web/: the static files of GraphiQL (GRAPHQL_IDE) and the dashboard (DASHBOARD), served by the service itself.
RUN npx graphql-codegen --config codegen.yml --check && npm run build && npm run build:web

FROM node:${NODE_VERSION}-bookworm-slim AS runtime
ENV NODE_ENV=production PORT=4000
WORKDIR /app
COPY package.json package-lock.json ./
# The image's SBOM (CycloneDX), of the tree installed here: npm sbom counts package.json's
# devDependencies as required and fails while they are absent, so it reads a copy without them.
RUN npm ci --omit=dev --no-audit --no-fund \
  && cp package.json /tmp/package.json && npm pkg delete devDependencies \
  && npm sbom --sbom-format cyclonedx > sbom.cdx.json \
  && mv /tmp/package.json package.json && npm cache clean --force
COPY --from=build /app/dist ./dist
COPY schema ./schema
USER node
EXPOSE 4000
HEALTHCHECK --interval=15s --timeout=3s --start-period=10s --retries=3 \
  CMD ["node", "-e", "fetch('http://127.0.0.1:'+(process.env.PORT||4000)+'/healthz').then(r=>process.exit(r.ok?0:1),()=>process.exit(1))"]
# SIGTERM goes straight to node (no shell in between), which shuts down gracefully.
CMD ["node", "dist/app/main.js"]
