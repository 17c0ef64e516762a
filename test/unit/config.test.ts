import { describe, expect, it } from 'vitest';
import { loadConfig } from '../../src/config.js';
import { ConfigError } from '../../src/errors.js';

describe('loadConfig', () => {
  it('has working defaults', () => {
    const config = loadConfig({});
    expect(config.port).toBe(4000);
    expect(config.kafka).toMatchObject({ brokers: ['127.0.0.1:9092'], resultsTopic: 'test-results', requestsTopic: 'test-requests', groupId: 'result-collection-service' });
    expect(config.store).toEqual({ kind: 'memory', redisUrl: 'redis://127.0.0.1:6379', redisKeyPrefix: 'rcs', ttlSeconds: 86_400, maxTests: 10_000, maxMessagesPerTest: 10_000 });
    expect(config.auth).toMatchObject({ mode: 'embedded', issuer: 'http://localhost:4000', audience: 'urn:result-collection-service', tokenType: 'at+jwt', algorithms: ['RS256'] });
    expect(config.graphql).toEqual({ maxDepth: 10, maxCost: 10_000, introspection: true });
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
    });
    expect(config).toMatchObject({ port: 8080, production: true, kafka: { brokers: ['a:1', 'b:2'], clientId: 'cid', groupId: 'gid', resultsTopic: 'r', requestsTopic: 'q', fromBeginning: false } });
    expect(config.store.ttlSeconds).toBe(60);
    expect(config.store.maxTests).toBe(5);
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
    ['AUTH_ISSUER', 'not a url'],
    ['WS_ALLOWED_ORIGINS', 'evil.example'],
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

  it('gives a replicated replica a group of its own from INSTANCE_ID, never committing', () => {
    const config = loadConfig({ STATE_STORE: 'replicated', INSTANCE_ID: 'pod-2', KAFKA_GROUP_ID: 'rcs', KAFKA_FROM_BEGINNING: 'false' });
    expect(config.kafka).toMatchObject({ groupId: 'rcs.pod-2', commitOffsets: false, fromBeginning: true });
    expect(() => loadConfig({ STATE_STORE: 'replicated' })).toThrow(/^INSTANCE_ID: is required/);
    expect(() => loadConfig({ STATE_STORE: 'replicated', INSTANCE_ID: 'has space' })).toThrow(/^INSTANCE_ID: /);
    expect(loadConfig({}).kafka).toMatchObject({ groupId: 'result-collection-service', commitOffsets: true });
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
    expect(loadConfig({ KAFKA_SESSION_TIMEOUT_MS: '45000', KAFKA_HEARTBEAT_INTERVAL_MS: '3000', KAFKA_REBALANCE_TIMEOUT_MS: '20000' }).kafka).toMatchObject({ sessionTimeoutMs: 45_000, heartbeatIntervalMs: 3000, rebalanceTimeoutMs: 20_000 });
    expect(loadConfig({ KAFKA_SESSION_TIMEOUT_MS: '3000' }).kafka.heartbeatIntervalMs).toBe(1000);
    expect(() => loadConfig({ KAFKA_SESSION_TIMEOUT_MS: '6000', KAFKA_HEARTBEAT_INTERVAL_MS: '2500' })).toThrow(/^KAFKA_HEARTBEAT_INTERVAL_MS: must be at most a third of KAFKA_SESSION_TIMEOUT_MS \(2000\), got 2500/);
    expect(() => loadConfig({ KAFKA_HEARTBEAT_INTERVAL_MS: '50' })).toThrow(/^KAFKA_HEARTBEAT_INTERVAL_MS: must be at least 100/);
    expect(() => loadConfig({ KAFKA_HEARTBEAT_INTERVAL_MS: 'often' })).toThrow(/^KAFKA_HEARTBEAT_INTERVAL_MS: expected an integer/);
    expect(() => loadConfig({ KAFKA_REBALANCE_TIMEOUT_MS: '500' })).toThrow(/^KAFKA_REBALANCE_TIMEOUT_MS: must be at least 1000/);
    expect(() => loadConfig({ KAFKA_REBALANCE_TIMEOUT_MS: '900000' })).toThrow(/^KAFKA_REBALANCE_TIMEOUT_MS: must be at most 600000/);
  });
});
