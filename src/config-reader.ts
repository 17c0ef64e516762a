/**
 * Typed, validated reads of one environment variable each: the only way the configuration files
 * read a value, so every bad value stops startup with a ConfigError that names its variable.
 * config.ts hands the environment in; nothing here reads `process.env` itself.
 */
import { ConfigError } from './errors.js';

/** The environment as read: variable name to raw value. */
export type Env = Readonly<Record<string, string | undefined>>;

/** Typed, validated reads of one environment variable each (see {@link createReader}). */
export type Reader = ReturnType<typeof createReader>;

/** Creates the reader of `env`: empty or blank values count as unset. */
export function createReader(env: Env) {
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
    ratio(name: string, fallback: number): number {
      const value = raw(name);
      if (value === undefined) return fallback;
      const n = Number(value);
      if (!/^\d*\.?\d+$/.test(value) || n > 1) throw new ConfigError(name, `expected a number from 0 to 1, got "${value}"`);
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
    json(name: string): Record<string, unknown> | null {
      const value = raw(name);
      if (value === undefined) return null;
      try {
        const parsed: unknown = JSON.parse(value);
        if (parsed === null || typeof parsed !== 'object' || Array.isArray(parsed)) throw new Error('not an object');
        return parsed as Record<string, unknown>;
      } catch {
        throw new ConfigError(name, 'expected a JSON object (a private JWK)');
      }
    },
    url(name: string): URL | null {
      const value = raw(name);
      if (value === undefined) return null;
      try {
        const url = new URL(value);
        if (url.protocol !== 'https:' && url.protocol !== 'http:') throw new Error('not http(s)');
        return url;
      } catch {
        throw new ConfigError(name, `expected an http(s) URL, got "${value}"`);
      }
    },
    /** A comma-separated list of `what` (e.g. "host:port", "origin"), each matching `item`. */
    list(name: string, fallback: readonly string[], item: RegExp, what: string): readonly string[] {
      const value = raw(name);
      if (value === undefined) return fallback;
      const items = value.split(',').map((s) => s.trim()).filter((s) => s !== '');
      if (items.length === 0) throw new ConfigError(name, `must list at least one ${what}`);
      for (const entry of items) {
        if (!item.test(entry)) throw new ConfigError(name, `"${entry}" is not a valid ${what}`);
      }
      return items;
    },
  };
}
