/**
 * Every environment variable the service reads, declared once: its section, type, default and
 * what it does. The reader (`reader.ts`) accepts only these names, and checks a static default
 * against the one the code falls back to; `docs/configuration.md` is generated from this list
 * (`npm run config:docs`; the test script fails when the page is stale).
 */

/** The kinds of value a setting holds, as the reference names them. */
export type SettingType = 'string' | 'integer' | 'number' | 'boolean' | 'enum' | 'list' | 'url' | 'file' | 'secret' | 'json';

/** One setting's declaration. */
export interface Setting {
  /** The reference's section (see {@link SECTIONS}). */
  readonly section: keyof typeof SECTIONS;
  readonly type: SettingType;
  /** The value used when the variable is unset, where it is one fixed value. */
  readonly default?: string | number | boolean;
  /** The default in words, where it depends on the environment or on other settings (Markdown). */
  readonly defaultNote?: string;
  /** What it does (Markdown). */
  readonly description: string;
}

/** The reference's sections, in order. */
export const SECTIONS = {
  process: 'Process',
  http: 'HTTP',
  kafka: 'Kafka',
  'kafka-security': 'Kafka TLS and SASL',
  state: 'State',
  redis: 'Redis',
  auth: 'Access tokens',
  issuer: 'Embedded issuer',
  graphql: 'GraphQL limits',
  'persisted-documents': 'Trusted documents and persisted queries',
  browser: 'Browsers: CORS, GraphiQL, the dashboard',
  websocket: 'WebSocket',
  sse: 'SSE',
  'rate-limits': 'Rate limits',
  telemetry: 'Tracing',
} as const;

/** The declarations, by variable name. */
export const SETTINGS = {
  NODE_ENV: {
    section: 'process',
    type: 'string',
    default: 'development',
    description:
      '`production` turns GraphiQL, the dashboard, field suggestions and automatic persisted queries off by default (`GRAPHQL_IDE`, `DASHBOARD`, `GRAPHQL_FIELD_SUGGESTIONS`, `GRAPHQL_APQ`). Error answers are the same in every environment (see `GRAPHQL_DEBUG_ERRORS`).',
  },
  LOG_LEVEL: {
    section: 'process',
    type: 'enum',
    default: 'info',
    description: '`fatal`, `error`, `warn`, `info`, `debug`, `trace` or `silent`. Logs are JSON lines on stdout.',
  },
  SERVICE_ROLE: {
    section: 'process',
    type: 'enum',
    defaultNote: '`all`',
    description:
      'Which parts this process runs: `all` (API and consumer), `api` (HTTP, WebSocket and the embedded issuer; produces start requests, consumes nothing) or `consumer` (consumes into the shared state; serves only `/healthz`, `/readyz` and `/metrics`). `api` and `consumer` need `STATE_STORE=redis`; with `memory` or `replicated` the process exits 78 naming `SERVICE_ROLE` and `STATE_STORE`. See [Running several replicas](redis-and-replicas.md#running-several-replicas).',
  },
  SHUTDOWN_TIMEOUT_MS: { section: 'process', type: 'integer', default: 10000, description: 'Longest graceful shutdown; in-flight requests get half of it.' },
  HEALTH_MAX_EVENT_LOOP_DELAY_MS: {
    section: 'process',
    type: 'integer',
    default: 5000,
    description:
      '`/healthz` answers 503 while the event loop was blocked longer than this within the last 10 s (see [Probes and alerts](operations.md#probes-and-alerts)).',
  },
  SHUTDOWN_DELAY_MS: {
    section: 'process',
    type: 'integer',
    default: 0,
    description:
      "After SIGTERM, how long the service goes on serving while `/readyz` answers 503, so load balancers stop routing to it before its listener closes (set it a little above the readiness probe's period). Counted before `SHUTDOWN_TIMEOUT_MS`.",
  },
  PORT: { section: 'http', type: 'integer', default: 4000, description: 'HTTP and WebSocket port (0 picks a free one).' },
  HOST: { section: 'http', type: 'string', default: '0.0.0.0', description: 'Listen address.' },
  TRUST_PROXY: {
    section: 'http',
    type: 'string',
    defaultNote: '`false`',
    description:
      "Which peers are proxies whose `X-Forwarded-For`, `X-Forwarded-Proto` and `X-Forwarded-Host` are believed: `false` (none: the TCP peer is the client), a hop count (`1`: the one load balancer or ingress in front, whatever its address), or a comma-separated list of the proxies' addresses and CIDRs (`10.0.0.0/8,fd00::/8`; `loopback`, `linklocal` and `uniquelocal` name those ranges). It decides the client IP the issuer's sign-in rate limit counts per (an IPv6 client per /64) and the scheme and host the embedded issuer publishes. `true` is refused. See [Client addresses behind a proxy](security.md#client-addresses-behind-a-proxy-trust_proxy).",
  },
  KAFKA_BROKERS: { section: 'kafka', type: 'list', defaultNote: '`127.0.0.1:9092`', description: 'Comma-separated `host:port` list.' },
  KAFKA_CLIENT_ID: { section: 'kafka', type: 'string', default: 'result-collection-service', description: 'Kafka client id.' },
  KAFKA_GROUP_ID: {
    section: 'kafka',
    type: 'string',
    default: 'result-collection-service',
    description: 'Consumer group of the results consumer. Replicas with the same group share the partitions.',
  },
  KAFKA_RESULTS_TOPIC: { section: 'kafka', type: 'string', default: 'test-results', description: 'Topic the results are read from.' },
  KAFKA_REQUESTS_TOPIC: {
    section: 'kafka',
    type: 'string',
    default: 'test-requests',
    description: 'Topic start requests are produced to (and, with `STATE_STORE=replicated`, read back by every replica).',
  },
  KAFKA_FROM_BEGINNING: {
    section: 'kafka',
    type: 'boolean',
    default: true,
    description: 'Where a group with no committed offset starts: the earliest retained record (`true`) or only new ones.',
  },
  KAFKA_FETCH_MAX_WAIT_MS: {
    section: 'kafka',
    type: 'integer',
    default: 500,
    description:
      "Longest a fetch waits for new records before returning empty: an upper bound on the added latency when the broker does not answer early (Kafka's own default).",
  },
  KAFKA_REQUEST_TIMEOUT_MS: {
    section: 'kafka',
    type: 'integer',
    default: 30000,
    description:
      "How long a request to a broker may go unanswered before its connection is given up and the request retried on a new one (1000–300000; kafkajs's and Kafka's own default). Bounds how long a connection that goes silent (a NAT or load balancer that forgot it) holds up reading and `startTest`; kafkajs gives a fetch at least `KAFKA_FETCH_MAX_WAIT_MS` and a group join at least its rebalance timeout. Keep it above what a healthy broker takes to answer (a produce waits for its replicas): a slow answer is given up too.",
  },
  KAFKA_COMMIT_INTERVAL_MS: {
    section: 'kafka',
    type: 'integer',
    default: 5000,
    description:
      'How often processed offsets are committed (0: after every batch). A crash redelivers at most this much work, which the store ignores as duplicates.',
  },
  KAFKA_SESSION_TIMEOUT_MS: {
    section: 'kafka',
    type: 'integer',
    default: 30000,
    description:
      "Consumer group session timeout: how long before a silent replica's partitions move (3000–300000; Kafka refuses values below its `group.min.session.timeout.ms`, 6000 by default).",
  },
  KAFKA_HEARTBEAT_INTERVAL_MS: {
    section: 'kafka',
    type: 'integer',
    default: 1000,
    description:
      "How often each replica heartbeats (at least 100, at most a third of the session timeout). A replica learns that the group is rebalancing only from a heartbeat's answer, so this bounds how long a join or graceful leave goes unnoticed.",
  },
  KAFKA_REBALANCE_TIMEOUT_MS: {
    section: 'kafka',
    type: 'integer',
    default: 60000,
    description:
      'How long the coordinator waits for every replica to rejoin during a rebalance before dropping the ones that did not (1000–600000). Only reached when a replica is stuck.',
  },
  KAFKA_MAX_BATCH_BYTES: {
    section: 'kafka',
    type: 'integer',
    default: 67108864,
    description:
      'Most bytes one compressed batch may decompress to (64 MiB). A batch over it fails like a corrupt one: the partition waits on it, with the cause in `/readyz` and the log (see [Compressed batches](kafka.md#compressed-batches)). Bounds what a crafted batch (a few bytes that state gigabytes) can make the consumer allocate.',
  },
  RESULT_MAX_BYTES: {
    section: 'kafka',
    type: 'integer',
    default: 1048576,
    description:
      'Largest result record value, in bytes after decompression (1 KiB to 64 MiB). A larger record is refused before it is parsed: logged, counted as malformed and copied to the dead-letter topic. Its payload is stored as it came, so this bounds each message the state holds.',
  },
  KAFKA_RECORD_MAX_HEADERS: {
    section: 'kafka',
    type: 'integer',
    default: 64,
    description:
      'Most headers one record may carry (1–10000). Checked before the client decodes them: a record with more is not decoded further but refused, counted as malformed (and `oversized`), copied to the dead-letter topic without its headers, and committed (see [Record bounds](kafka.md#record-bounds)).',
  },
  KAFKA_RECORD_MAX_HEADER_BYTES: {
    section: 'kafka',
    type: 'integer',
    default: 16384,
    description:
      'Most bytes the headers of one record may take, names, values and their lengths (256 B to 1 MiB). A record over it is refused like one with too many headers.',
  },
  KAFKA_RECORD_MAX_KEY_BYTES: {
    section: 'kafka',
    type: 'integer',
    default: 4096,
    description: 'Longest record key, in bytes (256 B to 1 MiB). A record over it is refused like one with too many headers; its dead-letter copy has no key.',
  },
  KAFKA_DEAD_LETTER_TOPIC: {
    section: 'kafka',
    type: 'string',
    defaultNote: '—',
    description:
      'Topic malformed result records are copied to (with `x-origin-topic`, `x-origin-partition`, `x-origin-offset` and `x-error` headers) before they are skipped. Unset: they are only logged and counted.',
  },
  KAFKA_PRODUCE_TIMEOUT_MS: {
    section: 'kafka',
    type: 'integer',
    default: 5000,
    description: 'How long `startTest` waits for the broker before answering `BROKER_UNAVAILABLE`.',
  },
  KAFKA_SSL: {
    section: 'kafka-security',
    type: 'boolean',
    defaultNote: '`false` (`true` when a CA, certificate, key or key password is given)',
    description: 'Connect to the brokers over TLS.',
  },
  KAFKA_SSL_CA_FILE: {
    section: 'kafka-security',
    type: 'file',
    defaultNote: '—',
    description: "PEM file of the CA certificates trusted for the brokers' certificates. Unset: Node's public CAs (managed services).",
  },
  KAFKA_SSL_CERT_FILE: {
    section: 'kafka-security',
    type: 'file',
    defaultNote: '—',
    description: 'PEM client certificate (chain) for mutual TLS; requires `KAFKA_SSL_KEY_FILE`.',
  },
  KAFKA_SSL_KEY_FILE: { section: 'kafka-security', type: 'file', defaultNote: '—', description: 'PEM private key of the client certificate.' },
  KAFKA_SSL_KEY_PASSWORD: {
    section: 'kafka-security',
    type: 'secret',
    defaultNote: '—',
    description: 'Passphrase of an encrypted client key, or a file holding it (one of the two).',
  },
  KAFKA_SSL_KEY_PASSWORD_FILE: {
    section: 'kafka-security',
    type: 'file',
    defaultNote: '—',
    description: 'Passphrase of an encrypted client key, or a file holding it (one of the two).',
  },
  KAFKA_SSL_VERIFY: {
    section: 'kafka-security',
    type: 'boolean',
    defaultNote: '`true`',
    description: "Verify the brokers' certificates (chain and host name). `false` is for test setups only and is logged as a warning.",
  },
  KAFKA_SSL_SERVERNAME: {
    section: 'kafka-security',
    type: 'string',
    defaultNote: '—',
    description:
      'Name sent in SNI and checked against the broker certificate instead of the host in `KAFKA_BROKERS` (brokers reached by IP or through a tunnel).',
  },
  KAFKA_SASL_MECHANISM: {
    section: 'kafka-security',
    type: 'enum',
    defaultNote: '—',
    description: '`plain`, `scram-sha-256` or `scram-sha-512`. Unset: no SASL.',
  },
  KAFKA_SASL_USERNAME: { section: 'kafka-security', type: 'string', defaultNote: '—', description: 'SASL username (required with a mechanism).' },
  KAFKA_SASL_PASSWORD: {
    section: 'kafka-security',
    type: 'secret',
    defaultNote: '—',
    description: 'SASL password, or a file holding it (e.g. a mounted secret; a trailing line break is dropped). Exactly one is required with a mechanism.',
  },
  KAFKA_SASL_PASSWORD_FILE: {
    section: 'kafka-security',
    type: 'file',
    defaultNote: '—',
    description: 'SASL password, or a file holding it (e.g. a mounted secret; a trailing line break is dropped). Exactly one is required with a mechanism.',
  },
  STATE_STORE: {
    section: 'state',
    type: 'enum',
    default: 'memory',
    description:
      '`memory` (this process only), `redis` (shared by every replica) or `replicated` (every replica consumes everything); see [Running several replicas](redis-and-replicas.md#running-several-replicas).',
  },
  INSTANCE_ID: {
    section: 'state',
    type: 'string',
    defaultNote: '—',
    description:
      "Stable name of this replica; required with `STATE_STORE=replicated`, where it names the replica's consumer groups (`KAFKA_GROUP_ID.INSTANCE_ID` for results, `KAFKA_GROUP_ID.INSTANCE_ID.requests` for requests).",
  },
  STORE_TTL_SECONDS: { section: 'state', type: 'integer', defaultNote: '`86400` (1 day)', description: 'A test with no new result for this long is dropped.' },
  STORE_MAX_TESTS: {
    section: 'state',
    type: 'integer',
    default: 10000,
    description: 'Past this many tests held in this process, the least recently updated are evicted (`STATE_STORE=memory` or `replicated`; Redis ignores it).',
  },
  TEST_INPUT_MAX_BYTES: {
    section: 'state',
    type: 'integer',
    default: 65536,
    description:
      'Largest input of a test, as JSON text in bytes (at most 1 MiB), the same on every way of starting one: the `startTest` mutation and `POST /tests` answer `INPUT_TOO_LARGE` (413) past it, and in the replicated mode a start request over it is logged and not recorded.',
  },
  JSON_MAX_DEPTH: {
    section: 'state',
    type: 'integer',
    default: 64,
    description:
      "Deepest nesting of objects and arrays (1 to 1000) in every JSON value the service stores and serves back: a test's input and a result's payload. A deeper input is refused with `INPUT_TOO_DEEP` (413) by the `startTest` mutation and `POST /tests`; a deeper result record is counted as malformed and copied to the dead-letter topic. A read skips and counts a stored value deeper than 1000 levels (written before the limit existed) instead of failing.",
  },
  JSON_MAX_KEYS: {
    section: 'state',
    type: 'integer',
    default: 10000,
    description:
      'Most members in one object of a stored JSON value (an input or a payload); past it an input is refused with `INPUT_TOO_LARGE` (413) and a result record is malformed, as past `JSON_MAX_DEPTH`.',
  },
  JSON_MAX_ARRAY_LENGTH: {
    section: 'state',
    type: 'integer',
    default: 100000,
    description:
      'Most items in one array of a stored JSON value (an input or a payload); past it an input is refused with `INPUT_TOO_LARGE` (413) and a result record is malformed, as past `JSON_MAX_DEPTH`.',
  },
  JSON_MAX_STRING_LENGTH: {
    section: 'state',
    type: 'integer',
    default: 1048576,
    description:
      'Longest string, key or value, in UTF-16 code units, in a stored JSON value (an input or a payload); past it an input is refused with `INPUT_TOO_LARGE` (413) and a result record is malformed, as past `JSON_MAX_DEPTH`.',
  },
  STORE_MAX_BYTES: {
    section: 'state',
    type: 'integer',
    default: 536870912,
    description:
      'Bytes the tests held in this process may hold, as counted (payload texts, keys and inputs, with a fixed overhead per message and per test), with `STATE_STORE=memory` or `replicated` (512 MiB): past it the least recently updated tests are evicted, as past `STORE_MAX_TESTS`; a message that cannot fit even then (its own test holds too much) is refused like one over `STORE_MAX_MESSAGES_PER_TEST`. Redis holds the state elsewhere and ignores it.',
  },
  STORE_MAX_MESSAGES_PER_TEST: {
    section: 'state',
    type: 'integer',
    default: 10000,
    description: 'Further messages of a full test are refused, logged and counted (not stored).',
  },
  REDIS_URL: {
    section: 'redis',
    type: 'string',
    default: 'redis://127.0.0.1:6379',
    description:
      "Redis for the parts whose store is Redis (`STATE_STORE=redis`: the result log; `RATE_LIMITS_STORE=redis`: the rate limits; `OIDC_STORE=redis`: the embedded issuer's sessions, grants and tokens): `redis://`, or `rediss://` for TLS (managed Redis services), with the password (and user) in the URL when Redis requires one: `rediss://:password@host:6380`, `rediss://user:password@host:6380/0`. Checked at startup (exit 78 naming it; the password is never repeated).",
  },
  REDIS_TLS_CA_FILE: {
    section: 'redis',
    type: 'file',
    defaultNote: '—',
    description: "PEM file of the CA to trust for `rediss://` when the server's certificate is not signed by a public CA (only with `rediss://`).",
  },
  REDIS_MODE: {
    section: 'redis',
    type: 'enum',
    default: 'standalone',
    description:
      "`standalone` (one Redis at `REDIS_URL`), `cluster` (Redis Cluster, from the seed nodes in `REDIS_CLUSTER_NODES`; notices use sharded pub/sub, Redis 7 or later) or `sentinel` (the primary Sentinel names `REDIS_SENTINEL_MASTER_NAME`, found through `REDIS_SENTINELS`). In `cluster` and `sentinel` modes `REDIS_URL` still gives TLS (`rediss://`) and the data nodes' credentials; its host is not used. See [Redis Cluster and Sentinel](redis-and-replicas.md#redis-cluster-and-sentinel).",
  },
  REDIS_CLUSTER_NODES: {
    section: 'redis',
    type: 'list',
    defaultNote: '—',
    description:
      'Seed nodes of the Redis Cluster (`host:port,host:port`); required with `REDIS_MODE=cluster`. Any reachable node will do: the client learns the others and follows slot moves and failovers.',
  },
  REDIS_SENTINELS: {
    section: 'redis',
    type: 'list',
    defaultNote: '—',
    description: 'The sentinels (`host:port,host:port`); required with `REDIS_MODE=sentinel`.',
  },
  REDIS_SENTINEL_MASTER_NAME: {
    section: 'redis',
    type: 'string',
    defaultNote: '—',
    description: 'The name the sentinels monitor the primary under; required with `REDIS_MODE=sentinel`.',
  },
  REDIS_SENTINEL_USERNAME: {
    section: 'redis',
    type: 'string',
    defaultNote: '—',
    description: "The sentinels' own user, when they require one (the data nodes' credentials are in `REDIS_URL`).",
  },
  REDIS_SENTINEL_PASSWORD: {
    section: 'redis',
    type: 'secret',
    defaultNote: '—',
    description: "The sentinels' own password (`requirepass` of the sentinels), or a file holding it; never both.",
  },
  REDIS_SENTINEL_PASSWORD_FILE: {
    section: 'redis',
    type: 'file',
    defaultNote: '—',
    description: "The sentinels' own password (`requirepass` of the sentinels), or a file holding it; never both.",
  },
  REDIS_WAIT_REPLICAS: {
    section: 'redis',
    type: 'integer',
    defaultNote: '`1` with `REDIS_MODE=cluster` or `sentinel`, `0` with `standalone`',
    description:
      'Replicas that must hold each write of the result log before it counts as stored (Redis `WAIT` after each write, on the node that took it). With `1`, a primary killed right after a write cannot take the write with it when its replica is promoted, so the consumer never commits a record the new primary lacks; each write costs a round trip to the replica more, and while a primary has no live replica its writes fail after `REDIS_WAIT_TIMEOUT_MS` and the consumer holds the partition until one is back. `0` does not wait: faster, but a failover may lose the last writes the consumer has committed (the only choice on one node, or on a Cluster without replicas). See [Redis Cluster and Sentinel](redis-and-replicas.md#redis-cluster-and-sentinel).',
  },
  REDIS_WAIT_TIMEOUT_MS: {
    section: 'redis',
    type: 'integer',
    default: 1000,
    description:
      "How long a write waits for `REDIS_WAIT_REPLICAS` replicas. With replicas to wait for, every Redis command of the service may take this long more than its 2 s before it fails, since the `WAIT` in a write's pipeline blocks that long.",
  },
  REDIS_KEY_PREFIX: { section: 'redis', type: 'string', default: 'rcs', description: 'Prefix of every Redis key and channel.' },
  PUBLIC_URL: {
    section: 'auth',
    type: 'url',
    defaultNote: '`http://localhost:$PORT`',
    description: "The service's public base URL; the embedded issuer's `iss`.",
  },
  AUTH_ISSUER: {
    section: 'auth',
    type: 'url',
    defaultNote: '—',
    description: 'Trusted issuer of an external identity provider (enables external mode; required with `AUTH_HS256_SECRET`).',
  },
  AUTH_JWKS_URI: { section: 'auth', type: 'url', defaultNote: '—', description: "The issuer's JWKS URL, instead of discovery." },
  AUTH_HS256_SECRET: { section: 'auth', type: 'secret', defaultNote: '—', description: 'Shared secret (≥ 32 bytes) for HS256 tokens.' },
  AUTH_AUDIENCE: { section: 'auth', type: 'string', default: 'urn:result-collection-service', description: "This API's identifier, required in `aud`." },
  AUTH_ALGORITHMS: {
    section: 'auth',
    type: 'list',
    defaultNote: '`RS256,ES256`',
    description: 'Accepted signing algorithms for external issuers (the embedded issuer uses RS256, HS256 mode only HS256).',
  },
  AUTH_CLOCK_TOLERANCE_SECONDS: { section: 'auth', type: 'integer', default: 5, description: 'Clock skew allowed for `exp`, `nbf`, `iat`.' },
  AUTH_VERIFIED_TOKEN_CACHE_SECONDS: {
    section: 'auth',
    type: 'integer',
    default: 60,
    description:
      "How long a token that passed verification is remembered, so repeated requests skip the signature check (never past the token's expiry; `0` verifies every request). A key removed from the issuer's JWKS stops being accepted within this time.",
  },
  AUTH_ACCESS_TOKEN_TYP: { section: 'auth', type: 'string', default: 'at+jwt', description: 'Required `typ` header; empty accepts any.' },
  AUTH_ADMIN_SCOPE: { section: 'auth', type: 'string', default: 'tests:admin', description: 'Scope that may read every test.' },
  OIDC_CLIENTS_FILE: { section: 'issuer', type: 'file', defaultNote: '—', description: 'JSON file of OAuth clients (embedded issuer).' },
  OIDC_USERS_FILE: { section: 'issuer', type: 'file', defaultNote: '—', description: 'JSON file of users who may sign in (embedded issuer).' },
  OIDC_SIGNING_KEY: {
    section: 'issuer',
    type: 'json',
    defaultNote: 'generated (required with `NODE_ENV=production`)',
    description: 'Private RSA JWK (JSON) that signs tokens.',
  },
  OIDC_COOKIE_KEYS: {
    section: 'issuer',
    type: 'list',
    defaultNote: 'generated (required with `NODE_ENV=production`)',
    description: 'Comma-separated keys (≥ 32 characters each) for sign-in cookies; the first signs, all verify.',
  },
  OIDC_STORE: {
    section: 'issuer',
    type: 'enum',
    defaultNote: '`redis` with `STATE_STORE=redis`, `memory` otherwise',
    description:
      'Where the embedded issuer keeps sign-in sessions, grants, codes and refresh tokens: `memory` (this process: lost at restart, and a sign-in begun on one replica cannot end on another) or `redis` (shared by every replica, kept across restarts; on `REDIS_URL`).',
  },
  OIDC_ACCESS_TOKEN_TTL_SECONDS: { section: 'issuer', type: 'integer', default: 600, description: 'Access token lifetime, from 10 to 7200 (two hours).' },
  OIDC_REFRESH_TOKEN_TTL_SECONDS: {
    section: 'issuer',
    type: 'integer',
    defaultNote: '`1209600` (14 days)',
    description: 'Refresh token (and grant) lifetime.',
  },
  GRAPHQL_MAX_DEPTH: { section: 'graphql', type: 'integer', default: 10, description: 'Maximum operation depth.' },
  GRAPHQL_MAX_COST: { section: 'graphql', type: 'integer', default: 10000, description: 'Maximum operation cost.' },
  GRAPHQL_RESPONSE_CACHE_MAX_ENTRIES: {
    section: 'graphql',
    type: 'integer',
    default: 10000,
    description:
      "Answers of `test` and `tests` queries over HTTP kept per process, per document, variables and caller visibility, until a test they read changes (the log's change feed drops them on every replica; nothing is served while the feed reconnects). `0` turns the cache off.",
  },
  GRAPHQL_DOCUMENT_CACHE_MAX_BYTES: {
    section: 'graphql',
    type: 'integer',
    default: 16777216,
    description:
      'Bytes of parsed documents kept for the next request with the same text, over HTTP, WebSocket and SSE together (16 MiB). A document is counted with its source text and every token the parser read (comments included), which is what it holds; the least recently used are dropped, and one larger than the whole budget is not kept. `0` keeps none.',
  },
  GRAPHQL_RESPONSE_CACHE_MAX_BYTES: {
    section: 'graphql',
    type: 'integer',
    defaultNote: '`67108864` (64 MiB)',
    description:
      'Most bytes of kept answers per process, as they are held in memory (each body, the test ids it read and their index); the least recently used are evicted, and every answer expires after `STORE_TTL_SECONDS` at most. `0` turns the cache off.',
  },
  GRAPHQL_INTROSPECTION: { section: 'graphql', type: 'boolean', default: true, description: 'Whether the schema can be introspected.' },
  GRAPHQL_MAX_ALIASES: {
    section: 'graphql',
    type: 'integer',
    default: 15,
    description: 'Maximum aliases in one operation (`__typename` is not counted); more is refused with `QUERY_TOO_MANY_ALIASES`.',
  },
  GRAPHQL_MAX_DIRECTIVES: {
    section: 'graphql',
    type: 'integer',
    default: 50,
    description: 'Maximum directives in one operation; more is refused with `QUERY_TOO_MANY_DIRECTIVES`.',
  },
  GRAPHQL_MAX_TOKENS: {
    section: 'graphql',
    type: 'integer',
    default: 1000,
    description:
      "Maximum parser tokens in one document (an IDE's introspection query has about 190); more is refused with `QUERY_TOO_MANY_TOKENS` as soon as the parser reaches the limit.",
  },
  GRAPHQL_FIELD_SUGGESTIONS: {
    section: 'graphql',
    type: 'boolean',
    defaultNote: '`true`, `false` when `NODE_ENV=production`',
    description:
      'Whether validation errors suggest similar field names ("Did you mean …?"); hidden, they would map the schema for callers who cannot introspect it.',
  },
  FEDERATION: {
    section: 'graphql',
    type: 'boolean',
    default: false,
    description:
      '`on` serves the schema as an Apollo Federation 2 subgraph: `Test` becomes an entity keyed by `correlationId`, and `_entities` and `_service` are added to `Query` (see [Federation](api.md#federation)). Off, the schema is the plain one.',
  },
  SUBSCRIPTION_QUEUE_LIMIT: {
    section: 'graphql',
    type: 'integer',
    default: 1000,
    description:
      'Changes held for one `testChanges` subscriber that is not reading before it is cut off with `SUBSCRIBER_TOO_SLOW`. (A `testMessages` subscriber that falls behind holds none: it is paused and caught up from the store.)',
  },
  GRAPHQL_TRUSTED_DOCUMENTS: {
    section: 'persisted-documents',
    type: 'string',
    defaultNote: '— (off)',
    description:
      "Path of a manifest (GraphQL Code Generator's `persisted-documents.json` or Apollo's persisted query manifest): only its operations run, sent by id. Checked at startup (exit 78 naming it). See [Trusted documents](api.md#trusted-documents-and-automatic-persisted-queries).",
  },
  GRAPHQL_APQ: {
    section: 'persisted-documents',
    type: 'enum',
    defaultNote: '`memory` (`off` when `NODE_ENV=production` or `GRAPHQL_TRUSTED_DOCUMENTS` is set)',
    description:
      'Automatic persisted queries: `memory` registers documents sent with their SHA-256 hash in a bounded in-process store, `off` answers a hash alone with `PERSISTED_QUERY_NOT_SUPPORTED`. `memory` with `GRAPHQL_TRUSTED_DOCUMENTS` is refused.',
  },
  GRAPHQL_APQ_MAX_ENTRIES: {
    section: 'persisted-documents',
    type: 'integer',
    default: 1000,
    description: 'Documents the APQ store keeps per process; past it the least recently used one is dropped.',
  },
  GRAPHQL_APQ_MAX_BYTES: {
    section: 'persisted-documents',
    type: 'integer',
    defaultNote: '`16777216` (16 MiB)',
    description:
      'Characters of document text the APQ store keeps per process (at least 1024); past it the least recently used documents are dropped, and a larger document is not kept.',
  },
  GRAPHQL_IDE: {
    section: 'browser',
    type: 'boolean',
    defaultNote: '`true` (`false` when `NODE_ENV=production` or `GRAPHQL_TRUSTED_DOCUMENTS` is set)',
    description:
      'Serve GraphiQL at `GET /graphql` to browsers (see [GraphiQL](api.md#graphiql)). With trusted documents it can run nothing, and turning it on logs a warning.',
  },
  GRAPHQL_DEBUG_ERRORS: {
    section: 'browser',
    type: 'boolean',
    default: false,
    description:
      "`true` adds stack traces (`extensions.stacktrace`) to GraphQL errors and shows unexpected errors' own messages instead of `Internal server error`. Off, no answer carries a stack trace or file path, in any environment; unexpected errors are always logged in full. For debugging only.",
  },
  GRAPHQL_IDE_CLIENT_ID: {
    section: 'browser',
    type: 'string',
    defaultNote: '—',
    description:
      "Public client of the embedded issuer that GraphiQL signs in with (code + PKCE; its `redirect_uris` must list the page's URL). Unset: no sign-in button. The local stack sets `demo-web`.",
  },
  DASHBOARD: {
    section: 'browser',
    type: 'boolean',
    defaultNote: '`true` (`false` when `NODE_ENV=production` or with `GRAPHQL_TRUSTED_DOCUMENTS`)',
    description: 'Serve the live dashboard at `/dashboard/` (see [Dashboard](api.md#dashboard); it sends operation text, which trusted documents refuse).',
  },
  DASHBOARD_CLIENT_ID: {
    section: 'browser',
    type: 'string',
    defaultNote: '—',
    description:
      'Public client of the embedded issuer that the dashboard signs in with (code + PKCE, refresh tokens; its `redirect_uris` must list `…/dashboard/`). Unset: the page says sign-in is not set up. The local stack sets `demo-web`.',
  },
  CORS_ALLOWED_ORIGINS: {
    section: 'browser',
    type: 'list',
    defaultNote: '— (none)',
    description:
      'Comma-separated exact origins (`https://host[:port]`, as browsers send them: lower case, no path, no default port) whose pages may call `/graphql` and `/tests` (CORS). Also the WebSocket list, unless `WS_ALLOWED_ORIGINS` is set. See [Calling from a browser](authentication.md#calling-from-a-browser).',
  },
  WS_ALLOWED_ORIGINS: {
    section: 'websocket',
    type: 'list',
    defaultNote: '`CORS_ALLOWED_ORIGINS`',
    description:
      "Comma-separated origins (`https://host[:port]`, or `*`) allowed to open WebSockets besides the service's own; set it only to keep WebSockets apart from CORS.",
  },
  WS_MAX_SUBSCRIPTIONS: { section: 'websocket', type: 'integer', default: 20, description: 'Operations running at once on one WebSocket.' },
  WS_MAX_CONNECTIONS: {
    section: 'websocket',
    type: 'integer',
    default: 20,
    description:
      'WebSockets one principal may hold open at once in one process; one more is closed with 4429 after `connection_init` (like `SSE_MAX_STREAMS` for event streams).',
  },
  WS_DRAIN_TIMEOUT_MS: {
    section: 'websocket',
    type: 'integer',
    default: 30000,
    description:
      "How long a WebSocket or an SSE stream may hold more than `WS_MAX_BUFFERED_BYTES` unsent (its client stopped reading) before it is cut: the socket is closed with 1008, the stream's connection dropped. What a client that never reads holds is bounded in time as well as in bytes.",
  },
  WS_MAX_MESSAGE_BYTES: { section: 'websocket', type: 'integer', defaultNote: '`65536`', description: 'Largest incoming WebSocket message.' },
  WS_MAX_BUFFERED_BYTES: {
    section: 'websocket',
    type: 'integer',
    defaultNote: '`4194304`',
    description:
      'Outgoing bytes buffered for one WebSocket client (or one SSE stream) past which its operations wait for it to read: its `testMessages` subscriptions are paused, holding nothing, and caught up from the store once it reads again; a `testChanges` subscription that falls more than `SUBSCRIPTION_QUEUE_LIMIT` changes behind ends with `SUBSCRIBER_TOO_SLOW`; a client over it for `WS_DRAIN_TIMEOUT_MS` is cut.',
  },
  WS_COALESCE_MS: {
    section: 'websocket',
    type: 'integer',
    default: 10,
    description:
      'How long, in milliseconds, the pushes to one WebSocket or SSE client may wait to leave together in one write while the process is busy (its event loop over 80 % occupied): under overload each write carries more frames, so the cost per push falls instead of rising. At low load every push leaves at the end of the turn it was made in. `0` never holds them.',
  },
  SSE_MAX_STREAMS: {
    section: 'sse',
    type: 'integer',
    default: 20,
    description:
      'Streams over HTTP (GraphQL over SSE and multipart HTTP subscriptions together) one principal may hold open at once in one process; the next is refused with 429 `TOO_MANY_SUBSCRIPTIONS`.',
  },
  RATE_LIMITS: {
    section: 'rate-limits',
    type: 'boolean',
    defaultNote: '`on`',
    description: '`off` turns every rate limit off (see [Rate limits](security.md#rate-limits)).',
  },
  RATE_LIMITS_STORE: {
    section: 'rate-limits',
    type: 'enum',
    defaultNote: '`redis` with `STATE_STORE=redis`, `memory` otherwise',
    description:
      'Where the budgets are counted: `memory` (each replica counts its own, so N replicas allow N times each budget) or `redis` (one budget shared by every replica, on `REDIS_URL`).',
  },
  RATE_LIMIT_API_PER_MINUTE: {
    section: 'rate-limits',
    type: 'integer',
    default: 600,
    description: 'Requests to `/graphql` and `/tests` per principal (token issuer and subject) per minute.',
  },
  RATE_LIMIT_SUBSCRIBES_PER_MINUTE: {
    section: 'rate-limits',
    type: 'integer',
    default: 120,
    description: 'GraphQL operations started over WebSocket, SSE or multipart HTTP per principal per minute, over all its connections and streams.',
  },
  RATE_LIMIT_WS_CONNECTIONS_PER_MINUTE: {
    section: 'rate-limits',
    type: 'integer',
    default: 30,
    description: 'New WebSocket connections per principal per minute; the next one is closed with 4429.',
  },
  RATE_LIMIT_AUTH_PER_MINUTE: {
    section: 'rate-limits',
    type: 'integer',
    default: 20,
    description:
      "Requests to the embedded issuer's token endpoint (`POST /oauth/token`), login form (`POST /interaction/…`) and authorization endpoint (`/oauth/authorize`, where each new sign-in begins) per client IP per minute.",
  },
  OTEL_EXPORTER_OTLP_ENDPOINT: {
    section: 'telemetry',
    type: 'url',
    defaultNote: '— (tracing off)',
    description:
      'OTLP/HTTP base URL of a collector (`http://collector:4318`); spans go to `<url>/v1/traces`. Set, tracing is on (see [Tracing](observability.md#tracing)); unset, nothing of the OpenTelemetry SDK is loaded.',
  },
  OTEL_SERVICE_NAME: { section: 'telemetry', type: 'string', default: 'result-collection-service', description: '`service.name` of the spans.' },
  OTEL_TRACES_SAMPLER: {
    section: 'telemetry',
    type: 'enum',
    default: 'parentbased_traceidratio',
    description:
      "Which traces are sampled, by the standard names: `parentbased_traceidratio` (a request or record that brings a `traceparent` keeps its caller's decision; new traces by `OTEL_TRACES_SAMPLER_ARG`), `parentbased_always_on`, `parentbased_always_off`, `traceidratio`, `always_on` or `always_off`. Result records never start a trace: only those whose `traceparent` is sampled get spans.",
  },
  OTEL_TRACES_SAMPLER_ARG: {
    section: 'telemetry',
    type: 'number',
    default: 1,
    description: "Share (0 … 1) of the traces that start here that are sampled; a request or record that brings a `traceparent` keeps its caller's decision.",
  },
} as const satisfies Record<string, Setting>;

/** The name of a declared setting. */
export type SettingName = keyof typeof SETTINGS;
