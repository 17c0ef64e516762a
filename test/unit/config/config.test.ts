import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { Writable } from 'node:stream';
import { inspect } from 'node:util';
import { pino } from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadConfig } from '../../../src/config/config.js';
import { ConfigError } from '../../../src/base/errors.js';
import { configError } from '../../support/config-error.js';
import { createTestPki, type TestPki } from '../../support/tls.js';

describe('loadConfig', () => {
  it('has working defaults', () => {
    const config = loadConfig({});
    expect(config.port).toBe(4000);
    expect(config.kafka).toMatchObject({
      brokers: ['127.0.0.1:9092'],
      resultsTopic: 'test-results',
      requestsTopic: 'test-requests',
      groupId: 'result-collection-service',
    });
    expect(config.resultLog).toEqual({
      kind: 'memory',
      ttlSeconds: 86_400,
      maxTests: 10_000,
      maxMessagesPerTest: 10_000,
      maxInputBytes: 64 * 1024,
      maxBytes: 512 * 1024 * 1024,
      jsonShape: { maxDepth: 64, maxKeys: 10_000, maxArrayLength: 100_000, maxStringLength: 1_048_576 },
    });
    // One set of shape limits for both doors.
    expect(config.kafka.jsonShape).toBe(config.resultLog.jsonShape);
    expect(() => loadConfig({ JSON_MAX_DEPTH: '1001' })).toThrow(/JSON_MAX_DEPTH/);
    expect(config.redis).toEqual({
      url: 'redis://127.0.0.1:6379',
      tlsCa: null,
      topology: { mode: 'standalone' },
      wait: { replicas: 0, timeoutMs: 1000 },
      keyPrefix: 'rcs',
    });
    expect(config.auth).toMatchObject({
      mode: 'embedded',
      issuer: 'http://localhost:4000',
      audience: 'urn:result-collection-service',
      tokenType: 'at+jwt',
      algorithms: ['RS256'],
    });
    expect(config.graphql).toEqual({
      maxDepth: 10,
      maxCost: 10_000,
      introspection: true,
      federation: false,
      responseCache: { maxEntries: 10_000, maxBytes: 64 * 1024 * 1024 },
      documentCacheMaxBytes: 16 * 1024 * 1024,
    });
    expect(config.kafka).toMatchObject({ maxResultBytes: 1024 * 1024, maxBatchBytes: 64 * 1024 * 1024 });
    expect(config.websocket).toMatchObject({ drainTimeoutMs: 30_000, maxConnectionsPerPrincipal: 20 });
  });

  it('reads every variable', () => {
    const config = loadConfig({
      PORT: '8080',
      KAFKA_BROKERS: 'a:1, b:2',
      KAFKA_CLIENT_ID: 'cid',
      KAFKA_GROUP_ID: 'gid',
      KAFKA_RESULTS_TOPIC: 'r',
      KAFKA_REQUESTS_TOPIC: 'q',
      KAFKA_FROM_BEGINNING: 'false',
      STORE_TTL_SECONDS: '60',
      STORE_MAX_TESTS: '5',
      GRAPHQL_MAX_DEPTH: '4',
      NODE_ENV: 'production',
      // Production runs the embedded issuer only with its keys configured (see below).
      OIDC_SIGNING_KEY: '{"kty":"RSA","d":"private"}',
      OIDC_COOKIE_KEYS: 'a-cookie-key-of-at-least-32-characters',
    });
    expect(config.issuer.signingKey).toEqual({ kty: 'RSA', d: 'private' });
    expect(config.issuer.cookieKeys).toEqual(['a-cookie-key-of-at-least-32-characters']);
    expect(config).toMatchObject({
      port: 8080,
      production: true,
      kafka: { brokers: ['a:1', 'b:2'], clientId: 'cid', groupId: 'gid', resultsTopic: 'r', requestsTopic: 'q', fromBeginning: false },
    });
    expect(config.resultLog.ttlSeconds).toBe(60);
    expect(config.resultLog.maxTests).toBe(5);
    expect(config.graphql.maxDepth).toBe(4);
  });

  it.each([
    ['PORT', 'eighty'],
    ['PORT', '70000'],
    ['KAFKA_BROKERS', 'no-port'],
    ['KAFKA_BROKERS', ' , '],
    ['STORE_TTL_SECONDS', '0'],
    ['STORE_MAX_TESTS', '1.5'],
    ['KAFKA_FROM_BEGINNING', 'maybe'],
    ['LOG_LEVEL', 'loud'],
    ['STATE_STORE', 'postgres'],
    ['SERVICE_ROLE', 'worker'],
    ['AUTH_ISSUER', 'not a url'],
    ['WS_ALLOWED_ORIGINS', 'evil.example'],
    ['CORS_ALLOWED_ORIGINS', 'app.example'],
    ['CORS_ALLOWED_ORIGINS', '*'],
    ['CORS_ALLOWED_ORIGINS', 'https://app.example/'],
    ['CORS_ALLOWED_ORIGINS', 'https://App.example:443'],
    ['GRAPHQL_IDE', 'sometimes'],
    ['DASHBOARD', 'maybe'],
    ['OIDC_SIGNING_KEY', '[1,2]'],
  ])('refuses %s=%s with an error naming the variable', (name, value) => {
    let caught: unknown;
    try {
      loadConfig({ [name]: value });
    } catch (error) {
      caught = error;
    }
    expect(caught).toBeInstanceOf(ConfigError);
    expect((caught as ConfigError).variable).toBe(name);
    expect((caught as ConfigError).message).toMatch(new RegExp(`^${name}: `));
  });

  it('reads the browser settings: CORS origins govern WebSockets unless set apart, the IDE and the dashboard are off in production', () => {
    expect(loadConfig({}).browser).toEqual({
      corsAllowedOrigins: [],
      graphqlIde: true,
      graphqlIdeClientId: null,
      dashboard: true,
      dashboardClientId: null,
      graphqlDebugErrors: false,
    });
    expect(loadConfig({ DASHBOARD_CLIENT_ID: 'dashboard' }).browser.dashboardClientId).toBe('dashboard');
    // Production needs an issuer's keys (or an external issuer): not the point here.
    const external = { AUTH_ISSUER: 'https://id.example', AUTH_JWKS_URI: 'https://id.example/jwks' };
    expect(loadConfig({ NODE_ENV: 'production', ...external }).browser.graphqlIde).toBe(false);
    expect(loadConfig({ NODE_ENV: 'production', GRAPHQL_IDE: 'on', ...external }).browser.graphqlIde).toBe(true);
    expect(loadConfig({ NODE_ENV: 'production', ...external }).browser.dashboard).toBe(false);
    expect(loadConfig({ NODE_ENV: 'production', DASHBOARD: 'on', ...external }).browser.dashboard).toBe(true);
    const listed = loadConfig({ CORS_ALLOWED_ORIGINS: 'https://app.example, http://localhost:5173' });
    expect(listed.browser.corsAllowedOrigins).toEqual(['https://app.example', 'http://localhost:5173']);
    expect(listed.websocket.allowedOrigins).toEqual(['https://app.example', 'http://localhost:5173']);
    const apart = loadConfig({ CORS_ALLOWED_ORIGINS: 'https://app.example', WS_ALLOWED_ORIGINS: 'https://live.example' });
    expect(apart.websocket.allowedOrigins).toEqual(['https://live.example']);
    expect(() => loadConfig({ CORS_ALLOWED_ORIGINS: 'https://App.example:443' })).toThrow(/write it as https:\/\/app\.example$/);
  });

  it('gives a replicated replica a group of its own from INSTANCE_ID, never committing, and one for the requests topic', () => {
    const config = loadConfig({ STATE_STORE: 'replicated', INSTANCE_ID: 'pod-2', KAFKA_GROUP_ID: 'rcs', KAFKA_FROM_BEGINNING: 'false' });
    expect(config.kafka).toMatchObject({ groupId: 'rcs.pod-2', commitOffsets: false, fromBeginning: true, requestsGroupId: 'rcs.pod-2.requests' });
    expect(() => loadConfig({ STATE_STORE: 'replicated' })).toThrow(/^INSTANCE_ID: is required/);
    expect(() => loadConfig({ STATE_STORE: 'replicated', INSTANCE_ID: 'has space' })).toThrow(/^INSTANCE_ID: /);
    expect(loadConfig({}).kafka).toMatchObject({ groupId: 'result-collection-service', commitOffsets: true, requestsGroupId: null });
  });

  it('runs API and consumer in one process by default, and splits them only over the Redis state', () => {
    expect(loadConfig({}).role).toBe('all');
    expect(loadConfig({ SERVICE_ROLE: 'all', STATE_STORE: 'replicated', INSTANCE_ID: 'pod-1' }).role).toBe('all');
    expect(loadConfig({ SERVICE_ROLE: 'api', STATE_STORE: 'redis' }).role).toBe('api');
    expect(loadConfig({ SERVICE_ROLE: 'consumer', STATE_STORE: 'redis' }).role).toBe('consumer');
    for (const role of ['api', 'consumer']) {
      for (const state of [{}, { STATE_STORE: 'memory' }, { STATE_STORE: 'replicated', INSTANCE_ID: 'pod-1' }]) {
        let caught: unknown;
        try {
          loadConfig({ SERVICE_ROLE: role, ...state });
        } catch (error) {
          caught = error;
        }
        expect(caught).toBeInstanceOf(ConfigError);
        expect((caught as ConfigError).variable).toBe('SERVICE_ROLE');
        const kind = 'STATE_STORE' in state ? state.STATE_STORE : 'memory';
        expect((caught as ConfigError).message).toBe(
          `SERVICE_ROLE: ${role} needs STATE_STORE=redis, got STATE_STORE=${kind}: api and consumer processes share their state through Redis (use SERVICE_ROLE=all with the ${kind} state)`,
        );
      }
    }
  });

  it('refuses to run the embedded issuer in production without configured signing and cookie keys', () => {
    const keys = { OIDC_SIGNING_KEY: '{"kty":"RSA","d":"private"}', OIDC_COOKIE_KEYS: 'a-cookie-key-of-at-least-32-characters' };
    const refusal = (env: Record<string, string>) => {
      try {
        loadConfig({ NODE_ENV: 'production', ...env });
      } catch (error) {
        expect(error).toBeInstanceOf(ConfigError);
        return { variable: (error as ConfigError).variable, message: (error as ConfigError).message };
      }
      return undefined;
    };
    expect(refusal({})?.variable).toBe('OIDC_SIGNING_KEY');
    expect(refusal({ OIDC_COOKIE_KEYS: keys.OIDC_COOKIE_KEYS })).toEqual({
      variable: 'OIDC_SIGNING_KEY',
      message:
        'OIDC_SIGNING_KEY: is required with NODE_ENV=production when the embedded issuer runs (no AUTH_ISSUER): a generated key is lost at restart and differs between replicas',
    });
    expect(refusal({ OIDC_SIGNING_KEY: keys.OIDC_SIGNING_KEY })?.variable).toBe('OIDC_COOKIE_KEYS');
    expect(refusal(keys)).toBeUndefined();
    // Outside production the keys may be generated; with an external issuer, or in a consumer
    // process, no issuer runs.
    expect(refusal({ NODE_ENV: 'development' })).toBeUndefined();
    expect(refusal({ AUTH_ISSUER: 'https://id.example', AUTH_JWKS_URI: 'https://id.example/jwks' })).toBeUndefined();
    expect(refusal({ SERVICE_ROLE: 'consumer', STATE_STORE: 'redis' })).toBeUndefined();
  });

  it('reads the rate limits: on by default with budgets per minute, off with RATE_LIMITS=off, errors naming the variable', () => {
    expect(loadConfig({}).rateLimits).toEqual({ enabled: true, store: 'memory', perMinute: { api: 600, subscribe: 120, wsConnect: 30, auth: 20 } });
    const set = loadConfig({
      RATE_LIMITS: 'off',
      RATE_LIMIT_API_PER_MINUTE: '5',
      RATE_LIMIT_SUBSCRIBES_PER_MINUTE: '6',
      RATE_LIMIT_WS_CONNECTIONS_PER_MINUTE: '7',
      RATE_LIMIT_AUTH_PER_MINUTE: '8',
    });
    expect(set.rateLimits).toEqual({ enabled: false, store: 'memory', perMinute: { api: 5, subscribe: 6, wsConnect: 7, auth: 8 } });
    expect(() => loadConfig({ RATE_LIMITS: 'sometimes' })).toThrow(/^RATE_LIMITS: expected true or false/);
    expect(() => loadConfig({ RATE_LIMIT_API_PER_MINUTE: '0' })).toThrow(/^RATE_LIMIT_API_PER_MINUTE: must be at least 1/);
    expect(() => loadConfig({ RATE_LIMIT_AUTH_PER_MINUTE: 'lots' })).toThrow(/^RATE_LIMIT_AUTH_PER_MINUTE: expected an integer/);
  });

  it('says what each list holds when it is empty or has a bad entry', () => {
    expect(() => loadConfig({ KAFKA_BROKERS: ' , ' })).toThrow(/^KAFKA_BROKERS: must list at least one host:port$/);
    expect(() => loadConfig({ KAFKA_BROKERS: 'no-port' })).toThrow(/^KAFKA_BROKERS: "no-port" is not a valid host:port$/);
    expect(() => loadConfig({ CORS_ALLOWED_ORIGINS: ',' })).toThrow(/^CORS_ALLOWED_ORIGINS: must list at least one origin/);
    expect(() => loadConfig({ WS_ALLOWED_ORIGINS: 'ftp://x' })).toThrow(/^WS_ALLOWED_ORIGINS: "ftp:\/\/x" is not a valid origin/);
    expect(() => loadConfig({ OIDC_COOKIE_KEYS: 'short' })).toThrow(/^OIDC_COOKIE_KEYS: "short" is not a valid key of at least 32 characters$/);
    expect(() => loadConfig({ AUTH_ISSUER: 'https://issuer.example', AUTH_ALGORITHMS: 'none' })).toThrow(/^AUTH_ALGORITHMS: "none" is not a valid algorithm/);
  });

  it('reads the SSE stream cap per caller: 20 by default, errors naming the variable', () => {
    expect(loadConfig({}).sse).toEqual({ maxStreamsPerPrincipal: 20 });
    expect(loadConfig({ SSE_MAX_STREAMS: '3' }).sse.maxStreamsPerPrincipal).toBe(3);
    expect(() => loadConfig({ SSE_MAX_STREAMS: '0' })).toThrow(/^SSE_MAX_STREAMS: must be at least 1/);
  });

  it('reads the tracing settings: off without an OTLP endpoint, errors naming the variable', () => {
    expect(loadConfig({}).telemetry).toEqual({
      otlpEndpoint: null,
      serviceName: 'result-collection-service',
      sampler: 'parentbased_traceidratio',
      sampleRatio: 1,
    });
    const on = loadConfig({
      OTEL_EXPORTER_OTLP_ENDPOINT: 'http://collector:4318',
      OTEL_SERVICE_NAME: 'rcs-eu',
      OTEL_TRACES_SAMPLER: 'traceidratio',
      OTEL_TRACES_SAMPLER_ARG: '0.25',
    }).telemetry;
    expect({ ...on, otlpEndpoint: on.otlpEndpoint?.href }).toEqual({
      otlpEndpoint: 'http://collector:4318/',
      serviceName: 'rcs-eu',
      sampler: 'traceidratio',
      sampleRatio: 0.25,
    });
    expect(() => loadConfig({ OTEL_TRACES_SAMPLER: 'jaeger_remote' })).toThrow(/OTEL_TRACES_SAMPLER/);
    expect(() => loadConfig({ OTEL_EXPORTER_OTLP_ENDPOINT: 'collector:4318' })).toThrow(/OTEL_EXPORTER_OTLP_ENDPOINT/);
    for (const bad of ['1.5', '-0.1', 'half']) expect(() => loadConfig({ OTEL_TRACES_SAMPLER_ARG: bad })).toThrow(/OTEL_TRACES_SAMPLER_ARG.*from 0 to 1/);
  });

  it('turns the access-token typ check off when AUTH_ACCESS_TOKEN_TYP is set and empty', () => {
    expect(loadConfig({ AUTH_ACCESS_TOKEN_TYP: '' }).auth.tokenType).toBeNull();
    expect(loadConfig({}).auth.tokenType).toBe('at+jwt');
    expect(loadConfig({ AUTH_ACCESS_TOKEN_TYP: 'jwt' }).auth.tokenType).toBe('jwt');
  });

  it('chooses the auth mode from the variables', () => {
    expect(loadConfig({ AUTH_ISSUER: 'https://id.example/realm' }).auth).toMatchObject({ mode: 'jwks', issuer: 'https://id.example/realm', jwksUri: null });
    expect(loadConfig({ AUTH_ISSUER: 'https://id.example', AUTH_JWKS_URI: 'https://id.example/keys' }).auth.jwksUri?.href).toBe('https://id.example/keys');
    const hs = loadConfig({ AUTH_ISSUER: 'https://i.example', AUTH_HS256_SECRET: 'x'.repeat(32) }).auth;
    expect(hs).toMatchObject({ mode: 'hs256', algorithms: ['HS256'] });
    expect(() => loadConfig({ AUTH_ISSUER: 'https://i.example', AUTH_HS256_SECRET: 'x'.repeat(31) })).toThrow(/^AUTH_HS256_SECRET: must be at least 32 bytes/);
    expect(() => loadConfig({ AUTH_HS256_SECRET: 'x'.repeat(40) })).toThrow(/^AUTH_ISSUER: /);
    expect(() => loadConfig({ AUTH_JWKS_URI: 'https://id.example/keys' })).toThrow(/^AUTH_ISSUER: /);
  });
  it('times the consumer group: heartbeat every second by default, at most a third of the session timeout', () => {
    expect(loadConfig({}).kafka).toMatchObject({ sessionTimeoutMs: 30_000, heartbeatIntervalMs: 1000, rebalanceTimeoutMs: 60_000 });
    expect(loadConfig({ KAFKA_SESSION_TIMEOUT_MS: '45000', KAFKA_HEARTBEAT_INTERVAL_MS: '3000', KAFKA_REBALANCE_TIMEOUT_MS: '20000' }).kafka).toMatchObject({
      sessionTimeoutMs: 45_000,
      heartbeatIntervalMs: 3000,
      rebalanceTimeoutMs: 20_000,
    });
    expect(loadConfig({ KAFKA_SESSION_TIMEOUT_MS: '3000' }).kafka.heartbeatIntervalMs).toBe(1000);
    expect(() => loadConfig({ KAFKA_SESSION_TIMEOUT_MS: '6000', KAFKA_HEARTBEAT_INTERVAL_MS: '2500' })).toThrow(
      /^KAFKA_HEARTBEAT_INTERVAL_MS: must be at most a third of KAFKA_SESSION_TIMEOUT_MS \(2000\), got 2500/,
    );
    expect(() => loadConfig({ KAFKA_HEARTBEAT_INTERVAL_MS: '50' })).toThrow(/^KAFKA_HEARTBEAT_INTERVAL_MS: must be at least 100/);
    expect(() => loadConfig({ KAFKA_HEARTBEAT_INTERVAL_MS: 'often' })).toThrow(/^KAFKA_HEARTBEAT_INTERVAL_MS: expected an integer/);
    expect(() => loadConfig({ KAFKA_REBALANCE_TIMEOUT_MS: '500' })).toThrow(/^KAFKA_REBALANCE_TIMEOUT_MS: must be at least 1000/);
    expect(() => loadConfig({ KAFKA_REBALANCE_TIMEOUT_MS: '900000' })).toThrow(/^KAFKA_REBALANCE_TIMEOUT_MS: must be at most 600000/);
  });
  it("times a broker's requests out after 30 s by default, as kafkajs and Kafka's own client do", () => {
    expect(loadConfig({}).kafka.requestTimeoutMs).toBe(30_000);
    expect(loadConfig({ KAFKA_REQUEST_TIMEOUT_MS: '5000' }).kafka.requestTimeoutMs).toBe(5000);
    expect(() => loadConfig({ KAFKA_REQUEST_TIMEOUT_MS: '500' })).toThrow(/^KAFKA_REQUEST_TIMEOUT_MS: must be at least 1000/);
    expect(() => loadConfig({ KAFKA_REQUEST_TIMEOUT_MS: '600000' })).toThrow(/^KAFKA_REQUEST_TIMEOUT_MS: must be at most 300000/);
    expect(() => loadConfig({ KAFKA_REQUEST_TIMEOUT_MS: '30s' })).toThrow(/^KAFKA_REQUEST_TIMEOUT_MS: expected an integer/);
  });
});

describe('loadConfig: TLS and SASL to the brokers', () => {
  let pki: TestPki;
  const PASSWORD = 'sasl-Pa55word-never-logged';
  let passwordFile: string;

  beforeAll(async () => {
    pki = await createTestPki();
    passwordFile = join(pki.dir, 'sasl-password');
    // As `echo "$PASSWORD" > file` writes it, with a line break.
    writeFileSync(passwordFile, `${PASSWORD}\n`);
    writeFileSync(join(pki.dir, 'empty'), '\n');
    writeFileSync(join(pki.dir, 'not-pem'), 'just text\n');
  });
  afterAll(async () => {
    await pki?.remove();
  });

  it('connects in plaintext without SASL by default', () => {
    expect(loadConfig({}).kafka).toMatchObject({ ssl: null, sasl: null });
  });

  it('reads SASL_SSL with SCRAM: the CA file at startup, the mechanism in any case, the password as given', () => {
    const { kafka } = loadConfig({
      KAFKA_SSL: 'true',
      KAFKA_SSL_CA_FILE: pki.caFile,
      KAFKA_SASL_MECHANISM: 'SCRAM-SHA-512',
      KAFKA_SASL_USERNAME: 'alice',
      KAFKA_SASL_PASSWORD: ` ${PASSWORD}`,
    });
    expect(kafka.ssl).toEqual({ ca: readFileSync(pki.caFile, 'utf8'), cert: null, key: null, keyPassword: null, verify: true, servername: null });
    // A password may begin or end with a space; only the file form loses its line break.
    expect(kafka.sasl).toEqual({ mechanism: 'scram-sha-512', username: 'alice', password: ` ${PASSWORD}` });
  });

  it('takes the password from KAFKA_SASL_PASSWORD_FILE without its trailing line break', () => {
    const { kafka } = loadConfig({ KAFKA_SSL: 'true', KAFKA_SASL_MECHANISM: 'plain', KAFKA_SASL_USERNAME: 'key', KAFKA_SASL_PASSWORD_FILE: passwordFile });
    expect(kafka.sasl).toEqual({ mechanism: 'plain', username: 'key', password: PASSWORD });
    // No CA file: Node's public CAs, as managed services need; the certificate is still verified.
    expect(kafka.ssl).toMatchObject({ ca: null, verify: true });
  });

  it('turns TLS on when a TLS file is given, and reads mutual TLS with an encrypted key', () => {
    const passphraseFile = join(pki.dir, 'key-passphrase');
    writeFileSync(passphraseFile, `${pki.clientKeyPassword}\n`);
    const { kafka } = loadConfig({
      KAFKA_SSL_CA_FILE: pki.caFile,
      KAFKA_SSL_CERT_FILE: pki.clientCertFile,
      KAFKA_SSL_KEY_FILE: pki.encryptedClientKeyFile,
      KAFKA_SSL_KEY_PASSWORD_FILE: passphraseFile,
      KAFKA_SSL_SERVERNAME: 'localhost',
    });
    expect(kafka.ssl).toEqual({
      ca: readFileSync(pki.caFile, 'utf8'),
      cert: readFileSync(pki.clientCertFile, 'utf8'),
      key: readFileSync(pki.encryptedClientKeyFile, 'utf8'),
      keyPassword: pki.clientKeyPassword,
      verify: true,
      servername: 'localhost',
    });
    expect(kafka.sasl).toBeNull();
    expect(loadConfig({ KAFKA_SSL: 'true', KAFKA_SSL_VERIFY: 'false' }).kafka.ssl?.verify).toBe(false);
    // Verification and server name only shape TLS: alone they do not turn it on.
    expect(loadConfig({ KAFKA_SSL_VERIFY: 'true', KAFKA_SSL_SERVERNAME: 'kafka.example' }).kafka.ssl).toBeNull();
  });

  it.each([
    [{ KAFKA_SSL: 'sometimes' }, 'KAFKA_SSL', /expected true or false/],
    [{ KAFKA_SSL: 'false', KAFKA_SSL_CA_FILE: '/etc/ca.pem' }, 'KAFKA_SSL', /is false, but KAFKA_SSL_CA_FILE is set/],
    [{ KAFKA_SSL_CA_FILE: '/nonexistent/ca.pem' }, 'KAFKA_SSL_CA_FILE', /cannot read "\/nonexistent\/ca.pem" \(ENOENT\)/],
    [{ KAFKA_SSL_CA_FILE: '/' }, 'KAFKA_SSL_CA_FILE', /cannot read "\/" \(EISDIR\)/],
    [{ KAFKA_SSL_CERT_FILE: '<client cert>' }, 'KAFKA_SSL_KEY_FILE', /is required with KAFKA_SSL_CERT_FILE/],
    [{ KAFKA_SSL_KEY_FILE: '<client key>' }, 'KAFKA_SSL_CERT_FILE', /is required with KAFKA_SSL_KEY_FILE/],
    [
      { KAFKA_SSL_CERT_FILE: '<client cert>', KAFKA_SSL_KEY_FILE: '<encrypted key>' },
      'KAFKA_SSL_KEY_PASSWORD',
      /is required: the key in KAFKA_SSL_KEY_FILE is encrypted/,
    ],
    [
      { KAFKA_SSL_CERT_FILE: '<client cert>', KAFKA_SSL_KEY_FILE: '<encrypted key>', KAFKA_SSL_KEY_PASSWORD: 'wrong-key-passphrase' },
      'KAFKA_SSL_KEY_PASSWORD',
      /does not decrypt the key/,
    ],
    [
      { KAFKA_SSL_CERT_FILE: '<client cert>', KAFKA_SSL_KEY_FILE: '<broker key>' },
      'KAFKA_SSL_KEY_FILE',
      /does not hold the private key of the certificate in KAFKA_SSL_CERT_FILE/,
    ],
    [{ KAFKA_SSL_CERT_FILE: '<client cert>', KAFKA_SSL_KEY_FILE: '<not pem>' }, 'KAFKA_SSL_KEY_FILE', /holds no PEM private key/],
    [{ KAFKA_SSL_CERT_FILE: '<client key>', KAFKA_SSL_KEY_FILE: '<client key>' }, 'KAFKA_SSL_CERT_FILE', /holds no PEM certificate/],
    [{ KAFKA_SSL_KEY_PASSWORD: 'x' }, 'KAFKA_SSL_KEY_PASSWORD', /is set, but KAFKA_SSL_KEY_FILE is not/],
    [
      { KAFKA_SASL_MECHANISM: 'gssapi', KAFKA_SASL_USERNAME: 'u', KAFKA_SASL_PASSWORD: 'p' },
      'KAFKA_SASL_MECHANISM',
      /expected one of plain, scram-sha-256, scram-sha-512, got "gssapi"/,
    ],
    [{ KAFKA_SASL_MECHANISM: 'scram-sha-256', KAFKA_SASL_PASSWORD: 'p' }, 'KAFKA_SASL_USERNAME', /is required with KAFKA_SASL_MECHANISM=scram-sha-256/],
    [
      { KAFKA_SASL_MECHANISM: 'plain', KAFKA_SASL_USERNAME: 'u' },
      'KAFKA_SASL_PASSWORD',
      /is required with KAFKA_SASL_MECHANISM=plain \(or KAFKA_SASL_PASSWORD_FILE\)/,
    ],
    [
      { KAFKA_SASL_USERNAME: 'u', KAFKA_SASL_PASSWORD: 'p' },
      'KAFKA_SASL_MECHANISM',
      /is required with KAFKA_SASL_USERNAME and the password: one of plain, scram-sha-256, scram-sha-512/,
    ],
    [
      { KAFKA_SASL_MECHANISM: 'plain', KAFKA_SASL_USERNAME: 'u', KAFKA_SASL_PASSWORD: 'p', KAFKA_SASL_PASSWORD_FILE: '<password file>' },
      'KAFKA_SASL_PASSWORD_FILE',
      /set either KAFKA_SASL_PASSWORD or KAFKA_SASL_PASSWORD_FILE, not both/,
    ],
    [
      { KAFKA_SASL_MECHANISM: 'plain', KAFKA_SASL_USERNAME: 'u', KAFKA_SASL_PASSWORD_FILE: '/nonexistent/password' },
      'KAFKA_SASL_PASSWORD_FILE',
      /cannot read "\/nonexistent\/password" \(ENOENT\)/,
    ],
    [{ KAFKA_SASL_MECHANISM: 'plain', KAFKA_SASL_USERNAME: 'u', KAFKA_SASL_PASSWORD_FILE: '<empty file>' }, 'KAFKA_SASL_PASSWORD_FILE', /is empty/],
  ])('refuses %o with an error naming %s', (env, variable, message) => {
    const files: Record<string, string> = {
      '<client cert>': pki.clientCertFile,
      '<client key>': pki.clientKeyFile,
      '<encrypted key>': pki.encryptedClientKeyFile,
      '<broker key>': join(pki.dir, 'broker.key'),
      '<not pem>': join(pki.dir, 'not-pem'),
      '<password file>': passwordFile,
      '<empty file>': join(pki.dir, 'empty'),
    };
    const resolved = Object.fromEntries(Object.entries(env).map(([name, value]) => [name, files[value] ?? value]));
    const error = configError(resolved);
    expect(error.variable).toBe(variable);
    expect(error.message).toMatch(new RegExp(`^${variable}: `));
    expect(error.message).toMatch(message);
  });

  it('never puts a secret in an error message', () => {
    const wrongPassphrase = 'wrong-key-passphrase-xyz';
    const errors = [
      configError({ KAFKA_SSL_CERT_FILE: pki.clientCertFile, KAFKA_SSL_KEY_FILE: pki.encryptedClientKeyFile, KAFKA_SSL_KEY_PASSWORD: wrongPassphrase }),
      configError({ KAFKA_SASL_MECHANISM: 'plain', KAFKA_SASL_USERNAME: 'u', KAFKA_SASL_PASSWORD: PASSWORD, KAFKA_SASL_PASSWORD_FILE: passwordFile }),
      configError({ KAFKA_SASL_MECHANISM: 'kerberos', KAFKA_SASL_USERNAME: 'u', KAFKA_SASL_PASSWORD: PASSWORD }),
      configError({ KAFKA_SASL_USERNAME: 'u', KAFKA_SASL_PASSWORD: PASSWORD }),
    ];
    const key = readFileSync(pki.clientKeyFile, 'utf8').split('\n')[1] as string;
    for (const error of errors) {
      for (const secret of [PASSWORD, wrongPassphrase, key]) {
        expect(error.message).not.toContain(secret);
        expect(inspect(error)).not.toContain(secret);
      }
    }
  });

  it('redacts the password and the private key wherever the configuration is printed or logged', () => {
    const config = loadConfig({
      KAFKA_SSL_CA_FILE: pki.caFile,
      KAFKA_SSL_CERT_FILE: pki.clientCertFile,
      KAFKA_SSL_KEY_FILE: pki.encryptedClientKeyFile,
      KAFKA_SSL_KEY_PASSWORD: pki.clientKeyPassword,
      KAFKA_SASL_MECHANISM: 'scram-sha-256',
      KAFKA_SASL_USERNAME: 'alice',
      KAFKA_SASL_PASSWORD: PASSWORD,
    });
    // Still there for the client that needs them.
    expect(config.kafka.sasl?.password).toBe(PASSWORD);
    expect(config.kafka.ssl?.keyPassword).toBe(pki.clientKeyPassword);

    let logged = '';
    const sink = new Writable({ write: (chunk: Buffer, _encoding, done) => ((logged += chunk.toString()), done()) });
    const logger = pino({ level: 'info' }, sink);
    logger.info({ config }, 'whole configuration');
    logger.info({ kafka: config.kafka, sasl: config.kafka.sasl, ssl: config.kafka.ssl }, 'parts');
    const printed = [logged, JSON.stringify(config), inspect(config, { depth: 10 }), `${JSON.stringify({ ...config.kafka })}`];
    const keyLine = (config.kafka.ssl?.key as string).split('\n')[1] as string;
    for (const text of printed) {
      expect(text).toContain('alice');
      expect(text).toContain('[redacted]');
      expect(text).not.toContain(PASSWORD);
      expect(text).not.toContain(pki.clientKeyPassword);
      expect(text).not.toContain(keyLine);
    }
  });
});
