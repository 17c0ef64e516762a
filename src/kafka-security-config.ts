/**
 * TLS and SASL settings of the broker connection, read by config.ts (the environment is handed in,
 * never read here). Certificate, key and password files are read once at startup, so a missing or
 * unreadable file stops the service with an error naming its variable, not at the first reconnect.
 * The objects that hold a secret redact it when serialized or inspected, so logging a config
 * object can never print a password or a private key.
 */
import { createPrivateKey, X509Certificate, type KeyObject } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { inspect } from 'node:util';
import { ConfigError } from './errors.js';

/** TLS to the brokers (`KAFKA_SSL`). */
export interface KafkaSslConfig {
  /** PEM certificates of the CAs trusted for the brokers' certificates; null: Node's public CAs. */
  readonly ca: string | null;
  /** PEM client certificate (chain) for mutual TLS; null when the brokers ask for none. */
  readonly cert: string | null;
  /** PEM private key of `cert` (secret). */
  readonly key: string | null;
  /** Passphrase of an encrypted `key` (secret). */
  readonly keyPassword: string | null;
  /** Verify the brokers' certificates (chain and host name). Only ever false for a test setup. */
  readonly verify: boolean;
  /** Name sent in SNI and checked against the certificate instead of the host of the address. */
  readonly servername: string | null;
}

/** The SASL mechanisms the service accepts. */
export const SASL_MECHANISMS = ['plain', 'scram-sha-256', 'scram-sha-512'] as const;

/** SASL authentication to the brokers (`KAFKA_SASL_MECHANISM`). */
export interface KafkaSaslConfig {
  readonly mechanism: (typeof SASL_MECHANISMS)[number];
  readonly username: string;
  /** Secret: redacted when the object is serialized or inspected. */
  readonly password: string;
}

type Env = Readonly<Record<string, string | undefined>>;
const REDACTED = '[redacted]';

/** Reads the TLS settings; null when TLS is off. */
export function readKafkaSsl(env: Env): KafkaSslConfig | null {
  // Certificates and keys mean TLS; KAFKA_SSL_VERIFY and KAFKA_SSL_SERVERNAME only shape it, so a
  // deployment template that always sets them (VERIFY=true, say) does not turn TLS on by itself.
  const settings = ['KAFKA_SSL_CA_FILE', 'KAFKA_SSL_CERT_FILE', 'KAFKA_SSL_KEY_FILE', 'KAFKA_SSL_KEY_PASSWORD', 'KAFKA_SSL_KEY_PASSWORD_FILE'];
  const given = settings.find((name) => value(env, name) !== undefined);
  const enabled = bool(env, 'KAFKA_SSL', given !== undefined);
  if (!enabled) {
    if (given !== undefined) throw new ConfigError('KAFKA_SSL', `is false, but ${given} is set: remove one of them`);
    return null;
  }
  const certFile = value(env, 'KAFKA_SSL_CERT_FILE');
  const keyFile = value(env, 'KAFKA_SSL_KEY_FILE');
  if (certFile !== undefined && keyFile === undefined) throw new ConfigError('KAFKA_SSL_KEY_FILE', 'is required with KAFKA_SSL_CERT_FILE (the private key of the client certificate)');
  if (keyFile !== undefined && certFile === undefined) throw new ConfigError('KAFKA_SSL_CERT_FILE', 'is required with KAFKA_SSL_KEY_FILE (the client certificate of the key)');
  const ca = readCertificates(env, 'KAFKA_SSL_CA_FILE');
  const cert = readCertificates(env, 'KAFKA_SSL_CERT_FILE');
  const keyPassword = readSecret(env, 'KAFKA_SSL_KEY_PASSWORD');
  if (keyPassword !== null && keyFile === undefined) throw new ConfigError('KAFKA_SSL_KEY_PASSWORD', 'is set, but KAFKA_SSL_KEY_FILE is not');
  let key: string | null = null;
  if (cert !== null) {
    key = readFile(env, 'KAFKA_SSL_KEY_FILE');
    const keyObject = parsePrivateKey(key, keyPassword, value(env, 'KAFKA_SSL_KEY_FILE') as string);
    // A mismatched pair fails later as an obscure handshake error on the broker's side; here it is named.
    if (!new X509Certificate(cert).checkPrivateKey(keyObject)) {
      throw new ConfigError('KAFKA_SSL_KEY_FILE', 'does not hold the private key of the certificate in KAFKA_SSL_CERT_FILE');
    }
  }
  const ssl: KafkaSslConfig = { ca, cert, key, keyPassword, verify: bool(env, 'KAFKA_SSL_VERIFY', true), servername: value(env, 'KAFKA_SSL_SERVERNAME') ?? null };
  return redacting(ssl, ['key', 'keyPassword']);
}

/** Reads the SASL settings; null when no mechanism is set. */
export function readKafkaSasl(env: Env): KafkaSaslConfig | null {
  const mechanism = value(env, 'KAFKA_SASL_MECHANISM')?.toLowerCase();
  const username = value(env, 'KAFKA_SASL_USERNAME');
  const password = readSecret(env, 'KAFKA_SASL_PASSWORD');
  if (mechanism === undefined) {
    // Credentials that would be silently ignored are a mistake worth stopping for.
    if (username !== undefined || password !== null) throw new ConfigError('KAFKA_SASL_MECHANISM', `is required with KAFKA_SASL_USERNAME and the password: one of ${SASL_MECHANISMS.join(', ')}`);
    return null;
  }
  if (!(SASL_MECHANISMS as readonly string[]).includes(mechanism)) {
    throw new ConfigError('KAFKA_SASL_MECHANISM', `expected one of ${SASL_MECHANISMS.join(', ')}, got "${value(env, 'KAFKA_SASL_MECHANISM')}"`);
  }
  if (username === undefined) throw new ConfigError('KAFKA_SASL_USERNAME', `is required with KAFKA_SASL_MECHANISM=${mechanism}`);
  if (password === null) throw new ConfigError('KAFKA_SASL_PASSWORD', `is required with KAFKA_SASL_MECHANISM=${mechanism} (or KAFKA_SASL_PASSWORD_FILE)`);
  return redacting({ mechanism: mechanism as KafkaSaslConfig['mechanism'], username, password }, ['password']);
}

function value(env: Env, name: string): string | undefined {
  const v = env[name]?.trim();
  return v === undefined || v === '' ? undefined : v;
}

function bool(env: Env, name: string, fallback: boolean): boolean {
  const v = value(env, name)?.toLowerCase();
  if (v === undefined) return fallback;
  if (['1', 'true', 'yes', 'on'].includes(v)) return true;
  if (['0', 'false', 'no', 'off'].includes(v)) return false;
  throw new ConfigError(name, `expected true or false, got "${v}"`);
}

function readFile(env: Env, name: string): string {
  const path = value(env, name) as string;
  try {
    return readFileSync(path, 'utf8');
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code ?? 'unknown error';
    throw new ConfigError(name, `cannot read "${path}" (${code})`);
  }
}

/** PEM certificates from the file a variable names; null when it is not set. */
function readCertificates(env: Env, name: string): string | null {
  if (value(env, name) === undefined) return null;
  const text = readFile(env, name);
  try {
    if (!text.includes('-----BEGIN CERTIFICATE-----')) throw new Error('no PEM certificate');
    void new X509Certificate(text);
  } catch {
    throw new ConfigError(name, `"${value(env, name)}" holds no PEM certificate (-----BEGIN CERTIFICATE-----)`);
  }
  return text;
}

function parsePrivateKey(pem: string, passphrase: string | null, path: string): KeyObject {
  try {
    return createPrivateKey(passphrase === null ? { key: pem, format: 'pem' } : { key: pem, format: 'pem', passphrase });
  } catch {
    // PKCS#8 ("BEGIN ENCRYPTED PRIVATE KEY") and traditional ("Proc-Type: 4,ENCRYPTED") encrypted keys.
    if (pem.includes('ENCRYPTED')) {
      if (passphrase === null) throw new ConfigError('KAFKA_SSL_KEY_PASSWORD', 'is required: the key in KAFKA_SSL_KEY_FILE is encrypted (or set KAFKA_SSL_KEY_PASSWORD_FILE)');
      throw new ConfigError('KAFKA_SSL_KEY_PASSWORD', 'does not decrypt the key in KAFKA_SSL_KEY_FILE');
    }
    throw new ConfigError('KAFKA_SSL_KEY_FILE', `"${path}" holds no PEM private key`);
  }
}

/**
 * A secret from `NAME` or from the file `NAME_FILE` names (a mounted Kubernetes or Docker secret).
 * The variable is taken as it is; the file loses its trailing line break.
 */
function readSecret(env: Env, name: string): string | null {
  const fileVar = `${name}_FILE`;
  const direct = env[name];
  const fromEnv = direct === undefined || direct === '' ? undefined : direct;
  if (fromEnv !== undefined && value(env, fileVar) !== undefined) throw new ConfigError(fileVar, `set either ${name} or ${fileVar}, not both`);
  if (fromEnv !== undefined) return fromEnv;
  if (value(env, fileVar) === undefined) return null;
  const secret = readFile(env, fileVar).replace(/\r?\n$/, '');
  if (secret === '') throw new ConfigError(fileVar, `"${value(env, fileVar)}" is empty`);
  return secret;
}

/**
 * Makes `object` print its secret fields as "[redacted]" through JSON (pino, JSON.stringify) and
 * util.inspect (console.log). The methods are not enumerable, so the object still compares and
 * spreads as plain data.
 */
function redacting<T extends object>(object: T, secrets: ReadonlyArray<keyof T>): T {
  const safe = () => {
    const copy: Record<string, unknown> = { ...(object as Record<string, unknown>) };
    for (const field of secrets) if (copy[field as string] !== null) copy[field as string] = REDACTED;
    return copy;
  };
  Object.defineProperty(object, 'toJSON', { value: safe, enumerable: false });
  Object.defineProperty(object, inspect.custom, { value: () => safe(), enumerable: false });
  return Object.freeze(object);
}
