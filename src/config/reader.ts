/**
 * Typed, validated reads of one environment variable each: the only way the configuration's
 * sections read a value, so every bad value stops startup with a ConfigError that names its
 * variable. Only declared settings (`settings.ts`) can be read, and a default the code falls back
 * to must be the one declared. config.ts hands the environment in; nothing here reads `process.env`.
 */
import { X509Certificate } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { ConfigError } from '../base/errors.js';
import { SETTINGS, type SettingName } from './settings.js';

/** The environment as read: variable name to raw value. */
export type Env = Readonly<Record<string, string | undefined>>;

/** Typed, validated reads of one environment variable each (see {@link createReader}). */
export type Reader = ReturnType<typeof createReader>;

/** Creates the reader of `env`: empty or blank values count as unset. */
export function createReader(env: Env) {
  const raw = (name: SettingName): string | undefined => {
    const value = env[name]?.trim();
    return value === undefined || value === '' ? undefined : value;
  };
  /** The code's fallback, which must be the declared default where one is declared. */
  const fallbackOf = <T>(name: SettingName, fallback: T): T => {
    const declared = (SETTINGS[name] as { default?: unknown }).default;
    if (declared !== undefined && declared !== fallback)
      throw new Error(`${name}: the code falls back to ${String(fallback)}, its declaration says ${String(declared)}`);
    return fallback;
  };
  const file = (name: SettingName, path: string): string => {
    try {
      return readFileSync(path, 'utf8');
    } catch (error) {
      throw new ConfigError(name, `cannot read "${path}" (${(error as NodeJS.ErrnoException).code ?? 'unknown error'})`);
    }
  };
  return {
    /** The value as given (trimmed), or undefined when unset or blank. */
    optional(name: SettingName): string | undefined {
      return raw(name);
    },
    /** True when the variable is present but blank (for settings where that turns a check off). */
    isSetEmpty(name: SettingName): boolean {
      return env[name] !== undefined && env[name]?.trim() === '';
    },
    string(name: SettingName, fallback: string): string {
      return raw(name) ?? fallbackOf(name, fallback);
    },
    int(name: SettingName, fallback: number, range: { min?: number; max?: number } = {}): number {
      const value = raw(name);
      if (value === undefined) return fallbackOf(name, fallback);
      if (!/^-?\d+$/.test(value)) throw new ConfigError(name, `expected an integer, got "${value}"`);
      const n = Number(value);
      if (range.min !== undefined && n < range.min) throw new ConfigError(name, `must be at least ${range.min}, got ${n}`);
      if (range.max !== undefined && n > range.max) throw new ConfigError(name, `must be at most ${range.max}, got ${n}`);
      return n;
    },
    ratio(name: SettingName, fallback: number): number {
      const value = raw(name);
      if (value === undefined) return fallbackOf(name, fallback);
      const n = Number(value);
      if (!/^\d*\.?\d+$/.test(value) || n > 1) throw new ConfigError(name, `expected a number from 0 to 1, got "${value}"`);
      return n;
    },
    bool(name: SettingName, fallback: boolean): boolean {
      const value = raw(name)?.toLowerCase();
      if (value === undefined) return fallbackOf(name, fallback);
      if (['1', 'true', 'yes', 'on'].includes(value)) return true;
      if (['0', 'false', 'no', 'off'].includes(value)) return false;
      throw new ConfigError(name, `expected true or false, got "${value}"`);
    },
    oneOf<T extends string>(name: SettingName, fallback: T, allowed: readonly T[]): T {
      const value = raw(name);
      if (value === undefined) return fallbackOf(name, fallback);
      if (!(allowed as readonly string[]).includes(value)) {
        throw new ConfigError(name, `expected one of ${allowed.join(', ')}, got "${value}"`);
      }
      return value as T;
    },
    json(name: SettingName): Record<string, unknown> | null {
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
    url(name: SettingName): URL | null {
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
    list(name: SettingName, fallback: readonly string[], item: RegExp, what: string): readonly string[] {
      const value = raw(name);
      if (value === undefined) return fallback;
      const items = value
        .split(',')
        .map((s) => s.trim())
        .filter((s) => s !== '');
      if (items.length === 0) throw new ConfigError(name, `must list at least one ${what}`);
      for (const entry of items) {
        if (!item.test(entry)) throw new ConfigError(name, `"${entry}" is not a valid ${what}`);
      }
      return items;
    },
    /** The text of the file the variable names, read now; null when unset. */
    file(name: SettingName): string | null {
      const path = raw(name);
      return path === undefined ? null : file(name, path);
    },
    /** PEM certificates from the file the variable names, read and parsed now; null when unset. */
    certificates(name: SettingName): string | null {
      const path = raw(name);
      if (path === undefined) return null;
      const text = file(name, path);
      try {
        if (!text.includes('-----BEGIN CERTIFICATE-----')) throw new Error('no PEM certificate');
        void new X509Certificate(text);
      } catch {
        throw new ConfigError(name, `"${path}" holds no PEM certificate (-----BEGIN CERTIFICATE-----)`);
      }
      return text;
    },
    /**
     * A secret from `name`, or from the file `fileName` names (a mounted Kubernetes or Docker
     * secret): never both. The variable is taken as it is; the file loses its trailing line break.
     */
    secret(name: SettingName, fileName: SettingName): string | null {
      const direct = env[name];
      const fromEnv = direct === undefined || direct === '' ? undefined : direct;
      const path = raw(fileName);
      if (fromEnv !== undefined && path !== undefined) throw new ConfigError(fileName, `set either ${name} or ${fileName}, not both`);
      if (fromEnv !== undefined) return fromEnv;
      if (path === undefined) return null;
      const secret = file(fileName, path).replace(/\r?\n$/, '');
      if (secret === '') throw new ConfigError(fileName, `"${path}" is empty`);
      return secret;
    },
  };
}
