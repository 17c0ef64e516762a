/**
 * The service's configuration: the one place that reads the environment. Every value is parsed and
 * validated up front, so a bad value stops startup with a message that names the variable.
 */
import { ConfigError } from './errors.js';

/** Validated configuration of one service process. */
export interface Config {
  readonly port: number;
  readonly host: string;
  /** `production` masks unexpected errors and disables nothing else. */
  readonly production: boolean;
  readonly logLevel: 'fatal' | 'error' | 'warn' | 'info' | 'debug' | 'trace' | 'silent';
  readonly kafka: KafkaConfig;
  readonly store: StoreConfig;
  readonly graphql: GraphQLConfig;
  /** Live messages buffered per subscriber before it is closed as too slow. */
  readonly subscriptionQueueLimit: number;
  /** How long a graceful shutdown may take before the process exits anyway. */
  readonly shutdownTimeoutMs: number;
}

/** Broker connection and topics. */
export interface KafkaConfig {
  readonly brokers: readonly string[];
  readonly clientId: string;
  readonly groupId: string;
  readonly resultsTopic: string;
  readonly requestsTopic: string;
  /** Where a consumer group with no committed offset starts: earliest retained (true) or latest. */
  readonly fromBeginning: boolean;
  /** How long `startTest` waits for the broker to accept the request. */
  readonly produceTimeoutMs: number;
  /** Longest a fetch waits for new records before returning empty (Kafka's own default is 500). */
  readonly fetchMaxWaitMs: number;
}

/** Bounds of the in-memory state. */
export interface StoreConfig {
  /** A test with no new result for this long is dropped. */
  readonly ttlSeconds: number;
  /** Past this many tests the least recently updated ones are evicted. */
  readonly maxTests: number;
  /** Messages kept per test; later ones are refused, logged and counted. */
  readonly maxMessagesPerTest: number;
}

/** Limits of GraphQL operations. */
export interface GraphQLConfig {
  readonly maxDepth: number;
  readonly maxCost: number;
  readonly introspection: boolean;
}

type Env = Readonly<Record<string, string | undefined>>;

/** Reads and validates the configuration from `env` (the process environment by default). */
export function loadConfig(env: Env = process.env): Config {
  const read = createReader(env);
  return {
    port: read.int('PORT', 4000, { min: 0, max: 65535 }),
    host: read.string('HOST', '0.0.0.0'),
    production: read.string('NODE_ENV', 'development') === 'production',
    logLevel: read.oneOf('LOG_LEVEL', 'info', ['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent']),
    kafka: {
      brokers: read.list('KAFKA_BROKERS', ['127.0.0.1:9092'], /^[^\s:,]+:\d{1,5}$/),
      clientId: read.string('KAFKA_CLIENT_ID', 'result-collection-service'),
      groupId: read.string('KAFKA_GROUP_ID', 'result-collection-service'),
      resultsTopic: read.string('KAFKA_RESULTS_TOPIC', 'test-results'),
      requestsTopic: read.string('KAFKA_REQUESTS_TOPIC', 'test-requests'),
      fromBeginning: read.bool('KAFKA_FROM_BEGINNING', true),
      produceTimeoutMs: read.int('KAFKA_PRODUCE_TIMEOUT_MS', 5000, { min: 100, max: 120_000 }),
      fetchMaxWaitMs: read.int('KAFKA_FETCH_MAX_WAIT_MS', 500, { min: 10, max: 30_000 }),
    },
    store: {
      ttlSeconds: read.int('STORE_TTL_SECONDS', 86_400, { min: 1 }),
      maxTests: read.int('STORE_MAX_TESTS', 10_000, { min: 1 }),
      maxMessagesPerTest: read.int('STORE_MAX_MESSAGES_PER_TEST', 10_000, { min: 1 }),
    },
    graphql: {
      maxDepth: read.int('GRAPHQL_MAX_DEPTH', 10, { min: 1, max: 100 }),
      maxCost: read.int('GRAPHQL_MAX_COST', 10_000, { min: 1 }),
      introspection: read.bool('GRAPHQL_INTROSPECTION', true),
    },
    subscriptionQueueLimit: read.int('SUBSCRIPTION_QUEUE_LIMIT', 1000, { min: 1 }),
    shutdownTimeoutMs: read.int('SHUTDOWN_TIMEOUT_MS', 10_000, { min: 100 }),
  };
}

function createReader(env: Env) {
  const raw = (name: string): string | undefined => {
    const value = env[name]?.trim();
    return value === undefined || value === '' ? undefined : value;
  };
  return {
    string(name: string, fallback: string): string {
      return raw(name) ?? fallback;
    },
    int(name: string, fallback: number, range: { min?: number; max?: number } = {}): number {
      const value = raw(name);
      if (value === undefined) return fallback;
      if (!/^-?\d+$/.test(value)) throw new ConfigError(name, `expected an integer, got "${value}"`);
      const n = Number(value);
      if (range.min !== undefined && n < range.min) throw new ConfigError(name, `must be at least ${range.min}, got ${n}`);
      if (range.max !== undefined && n > range.max) throw new ConfigError(name, `must be at most ${range.max}, got ${n}`);
      return n;
    },
    bool(name: string, fallback: boolean): boolean {
      const value = raw(name)?.toLowerCase();
      if (value === undefined) return fallback;
      if (['1', 'true', 'yes', 'on'].includes(value)) return true;
      if (['0', 'false', 'no', 'off'].includes(value)) return false;
      throw new ConfigError(name, `expected true or false, got "${value}"`);
    },
    oneOf<T extends string>(name: string, fallback: T, allowed: readonly T[]): T {
      const value = raw(name);
      if (value === undefined) return fallback;
      if (!(allowed as readonly string[]).includes(value)) {
        throw new ConfigError(name, `expected one of ${allowed.join(', ')}, got "${value}"`);
      }
      return value as T;
    },
    list(name: string, fallback: readonly string[], item: RegExp): readonly string[] {
      const value = raw(name);
      if (value === undefined) return fallback;
      const items = value.split(',').map((s) => s.trim()).filter((s) => s !== '');
      if (items.length === 0) throw new ConfigError(name, 'must list at least one host:port');
      for (const entry of items) {
        if (!item.test(entry)) throw new ConfigError(name, `"${entry}" is not host:port`);
      }
      return items;
    },
  };
}
