/**
 * Import boundaries of the service, checked by `npm run lint` (dependency-cruiser over src/).
 *
 * The layers these rules enforce (which folder may import which, and where each client library may
 * be imported) are described once, in ARCHITECTURE.md ("Folders: what each owns and may import").
 * Change the rules and that table together.
 *
 * Rules about code inside a file (process.env outside src/config/config.ts) are in eslint.config.js.
 */

/** The service layer (src/app/: entry point and composition roots); its files may import each other, nothing below them may import them. */
const SERVICE = '^src/app/';
/** The composition root that builds the Kafka ingest: the only file outside src/ingest/ that imports src/ingest/kafka-*.ts. */
const KAFKA_ROOT = '^src/app/start-from-config\\.ts$';
/**
 * Where ioredis may be imported: the Redis implementations (of the result log and of the issuer's
 * storage, the rate limits), and src/redis/, which owns the connections and opens every one.
 */
const REDIS_FILES = ['^src/(log|auth|rate-limits)/redis-[^/]+\\.ts$', '^src/redis/'];
/** Files and folders of the base layer outside src/domain/. */
const BASE_FILES = ['^src/base/', '^src/config/', '^src/process/', '^src/telemetry/(trace-context|start-telemetry)\\.ts$'];
/** The one file that loads the OpenTelemetry SDK, its instrumentations and the loader hook. */
const TELEMETRY_BOOTSTRAP = '^src/telemetry/start-telemetry\\.ts$';
/** Packages of the Kafka client: kafkajs and the codecs that plug into it. */
const KAFKA_PACKAGES = '(^|node_modules/)(kafkajs|kafkajs-snappy|@2l/kafkajs-lz4)(/|$)';

/** @type {import('dependency-cruiser').IConfiguration} */
module.exports = {
  forbidden: [
    // --- client libraries stay behind their seams ---
    {
      name: 'kafkajs-only-in-ingest',
      comment:
        'kafkajs (and its codec packages) is imported only under src/ingest/: the rest of the service sees the seams in src/ingest/consumer.ts, request-publisher.ts, request-consumer.ts and broker-side.ts.',
      severity: 'error',
      from: { path: '^src/', pathNot: '^src/ingest/' },
      to: { path: KAFKA_PACKAGES },
    },
    {
      name: 'ioredis-only-in-redis-implementations',
      comment:
        'ioredis is imported only by the Redis implementations (src/log/redis-*.ts, src/auth/redis-*.ts, src/rate-limits/redis-*.ts) and by src/redis/, whose createRedisConnection (redis-from-config.ts) is the one place that opens Redis connections.',
      severity: 'error',
      from: { path: '^src/', pathNot: REDIS_FILES },
      to: { path: '(^|node_modules/)ioredis(/|$)' },
    },
    {
      name: 'oidc-provider-values-through-its-wrapper',
      comment:
        "oidc-provider's values are imported only through src/auth/oidc-provider.ts, which evaluates the library after src/auth/lts-line-notice.ts (its runtime check); types may be imported anywhere.",
      severity: 'error',
      from: { path: '^src/', pathNot: '^src/auth/oidc-provider\\.ts$' },
      to: { path: '(^|node_modules/)oidc-provider(/|$)', dependencyTypesNot: ['type-only'] },
    },
    {
      name: 'opentelemetry-sdk-only-in-its-bootstrap',
      comment:
        'The service code uses @opentelemetry/api alone (a no-op while no SDK runs); the SDK, exporters, instrumentations and the import-in-the-middle hook are imported only by src/telemetry/start-telemetry.ts, so nothing of them loads when tracing is off.',
      severity: 'error',
      from: { path: '^src/', pathNot: TELEMETRY_BOOTSTRAP },
      to: { path: '(^|node_modules/)(@opentelemetry/(?!api/)|import-in-the-middle/)' },
    },
    {
      name: 'telemetry-bootstrap-only-from-main',
      comment:
        'src/app/main.ts imports the SDK bootstrap (dynamically, when tracing is configured) before the rest of the service, so the instrumentations see the modules they patch load.',
      severity: 'error',
      from: { path: '^src/', pathNot: ['^src/app/main\\.ts$', TELEMETRY_BOOTSTRAP] },
      to: { path: TELEMETRY_BOOTSTRAP },
    },
    {
      name: 'kafka-files-only-from-composition-root',
      comment:
        'Outside src/ingest/ only src/app/start-from-config.ts (which builds the Kafka broker side) imports src/ingest/kafka-*.ts; everything else uses the seam files (consumer.ts, request-publisher.ts, request-consumer.ts, broker-side.ts).',
      severity: 'error',
      from: { path: '^src/', pathNot: ['^src/ingest/', KAFKA_ROOT] },
      to: { path: '^src/ingest/kafka-' },
    },
    {
      name: 'apollo-server-only-in-its-http-binding',
      comment:
        "Apollo Server (@apollo/server and its Express integration) is imported only by src/graphql/http/: the server's construction (apollo-server.ts) and the HTTP binding (graphql-endpoint.ts). The operation rules, the error edge and the streaming bindings know nothing of it.",
      severity: 'error',
      from: { path: '^src/', pathNot: '^src/graphql/http/' },
      to: { path: '(^|node_modules/)(@apollo/server|@as-integrations/express5)(/|$)' },
    },
    {
      name: 'src-not-into-test-code',
      comment: 'Production code never imports test, benchmark, tool or script code (the other way round is fine).',
      severity: 'error',
      from: { path: '^src/' },
      to: { path: '^(test|bench|tools|scripts)/' },
    },
    {
      name: 'src-not-to-dev-dependencies',
      comment: 'Production code imports only runtime dependencies: the image installs no devDependencies. Type-only imports are allowed (erased at build).',
      severity: 'error',
      from: { path: '^src/' },
      to: { dependencyTypes: ['npm-dev'], dependencyTypesNot: ['type-only'] },
    },

    // --- layers: nothing imports upward ---
    {
      name: 'domain-is-a-leaf',
      comment: 'src/domain/ holds the types and rules of results; it imports nothing else of the service but src/base/errors.ts.',
      severity: 'error',
      from: { path: '^src/domain/' },
      to: { path: '^src/', pathNot: ['^src/domain/', '^src/base/errors\\.ts$'] },
    },
    {
      name: 'base-is-a-leaf',
      comment: 'Errors, logger and configuration are used everywhere; they import only each other and src/domain/.',
      severity: 'error',
      from: { path: BASE_FILES },
      to: { path: '^src/', pathNot: [...BASE_FILES, '^src/domain/'] },
    },
    {
      name: 'redis-connections-below-their-users',
      comment: 'src/redis/ owns the Redis connections; it knows the base layer and ioredis, not the parts that keep state in Redis.',
      severity: 'error',
      from: { path: '^src/redis/' },
      to: { path: '^src/', pathNot: ['^src/redis/', ...BASE_FILES, '^src/domain/'] },
    },
    {
      name: 'state-below-ingest-and-api',
      comment: 'The result log knows the domain, not who calls it.',
      severity: 'error',
      from: { path: '^src/log/' },
      to: { path: ['^src/(ingest|results|auth|graphql|http)/', '^src/telemetry/(consumer-)?metrics\\.ts$', SERVICE] },
    },
    {
      name: 'ingest-below-results-and-api',
      comment: 'src/ingest/ hands decoded messages to a handler; it never imports the result log, the use cases, auth, GraphQL or HTTP.',
      severity: 'error',
      from: { path: '^src/ingest/' },
      to: { path: ['^src/(log|results|auth|graphql|http)/', '^src/telemetry/(consumer-)?metrics\\.ts$', SERVICE] },
    },
    {
      name: 'use-cases-below-api',
      comment: 'Results, auth and metrics are used by GraphQL and HTTP, never the other way round.',
      severity: 'error',
      from: { path: ['^src/(results|auth|rate-limits)/', '^src/telemetry/(consumer-)?metrics\\.ts$'] },
      to: { path: ['^src/(graphql|http)/', SERVICE] },
    },
    {
      name: 'graphql-never-reaches-the-broker',
      comment: 'GraphQL, HTTP, auth and the result log never import src/ingest/ (start requests go through src/results/test-starter.ts).',
      severity: 'error',
      from: { path: '^src/(graphql|http|auth|log|rate-limits)/' },
      to: { path: ['^src/ingest/', KAFKA_PACKAGES] },
    },
    {
      name: 'graphql-and-http-are-siblings',
      comment: 'The GraphQL and the REST/HTTP layers do not import each other; src/app/service.ts wires them onto one server.',
      severity: 'error',
      from: { path: '^src/(graphql|http)/' },
      to: { path: '^src/(graphql|http)/', pathNot: '^src/$1/' },
    },
    {
      name: 'composition-roots-on-top',
      comment: 'Only the service layer itself (entry point and composition roots) imports the service layer.',
      severity: 'error',
      from: { path: '^src/', pathNot: SERVICE },
      to: { path: SERVICE },
    },
    {
      name: 'no-circular',
      comment:
        'Import cycles inside src/ make the layers meaningless. Type imports count too: a circle of types is still two files that cannot be read one without the other (shared types go in a seam file).',
      severity: 'error',
      from: { path: '^src/' },
      to: { circular: true },
    },
    {
      name: 'not-to-unresolvable',
      comment: 'An import that does not resolve cannot be checked against these rules.',
      severity: 'error',
      from: { path: '^src/' },
      to: { couldNotResolve: true },
    },
  ],
  options: {
    doNotFollow: { path: 'node_modules' },
    exclude: { path: '^src/graphql/schema/generated/' },
    // Type-only imports count: a kafkajs type outside src/ingest/ leaks the client as surely as a value.
    tsPreCompilationDeps: true,
    tsConfig: { fileName: 'tsconfig.json' },
    enhancedResolveOptions: {
      exportsFields: ['exports'],
      conditionNames: ['import', 'require', 'node', 'default', 'types'],
      mainFields: ['module', 'main', 'types', 'typings'],
    },
    reporterOptions: { text: { highlightFocused: true } },
  },
};
