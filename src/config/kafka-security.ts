/**
 * TLS and SASL settings of the broker connection, read through the configuration's reader.
 * Certificate, key and password files are read once at startup, so a missing or
 * unreadable file stops the service with an error naming its variable, not at the first reconnect.
 * The objects that hold a secret redact it when serialized or inspected, so logging a config
 * object can never print a password or a private key.
 */
import { createPrivateKey, X509Certificate, type KeyObject } from 'node:crypto';
import { inspect } from 'node:util';
import { ConfigError } from '../base/errors.js';
import type { Reader } from './reader.js';
import type { SettingName } from './settings.js';

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

const REDACTED = '[redacted]';

/** Reads the TLS settings; null when TLS is off. */
export function readKafkaSsl(read: Reader): KafkaSslConfig | null {
  // Certificates and keys mean TLS; KAFKA_SSL_VERIFY and KAFKA_SSL_SERVERNAME only shape it, so a
  // deployment template that always sets them (VERIFY=true, say) does not turn TLS on by itself.
  const settings: SettingName[] = ['KAFKA_SSL_CA_FILE', 'KAFKA_SSL_CERT_FILE', 'KAFKA_SSL_KEY_FILE', 'KAFKA_SSL_KEY_PASSWORD', 'KAFKA_SSL_KEY_PASSWORD_FILE'];
  const given = settings.find((name) => read.optional(name) !== undefined);
  const enabled = read.bool('KAFKA_SSL', given !== undefined);
  if (!enabled) {
    if (given !== undefined) throw new ConfigError('KAFKA_SSL', `is false, but ${given} is set: remove one of them`);
    return null;
  }
  const certFile = read.optional('KAFKA_SSL_CERT_FILE');
  const keyFile = read.optional('KAFKA_SSL_KEY_FILE');
  if (certFile !== undefined && keyFile === undefined)
    throw new ConfigError('KAFKA_SSL_KEY_FILE', 'is required with KAFKA_SSL_CERT_FILE (the private key of the client certificate)');
  if (keyFile !== undefined && certFile === undefined)
    throw new ConfigError('KAFKA_SSL_CERT_FILE', 'is required with KAFKA_SSL_KEY_FILE (the client certificate of the key)');
  const ca = read.certificates('KAFKA_SSL_CA_FILE');
  const cert = read.certificates('KAFKA_SSL_CERT_FILE');
  const keyPassword = read.secret('KAFKA_SSL_KEY_PASSWORD', 'KAFKA_SSL_KEY_PASSWORD_FILE');
  if (keyPassword !== null && keyFile === undefined) throw new ConfigError('KAFKA_SSL_KEY_PASSWORD', 'is set, but KAFKA_SSL_KEY_FILE is not');
  let key: string | null = null;
  if (cert !== null) {
    key = read.file('KAFKA_SSL_KEY_FILE') as string;
    const keyObject = parsePrivateKey(key, keyPassword, keyFile as string);
    // A mismatched pair fails later as an obscure handshake error on the broker's side; here it is named.
    if (!new X509Certificate(cert).checkPrivateKey(keyObject)) {
      throw new ConfigError('KAFKA_SSL_KEY_FILE', 'does not hold the private key of the certificate in KAFKA_SSL_CERT_FILE');
    }
  }
  const ssl: KafkaSslConfig = {
    ca,
    cert,
    key,
    keyPassword,
    verify: read.bool('KAFKA_SSL_VERIFY', true),
    servername: read.optional('KAFKA_SSL_SERVERNAME') ?? null,
  };
  return redacting(ssl, ['key', 'keyPassword']);
}

/** Reads the SASL settings; null when no mechanism is set. */
export function readKafkaSasl(read: Reader): KafkaSaslConfig | null {
  const given = read.optional('KAFKA_SASL_MECHANISM');
  const mechanism = given?.toLowerCase();
  const username = read.optional('KAFKA_SASL_USERNAME');
  const password = read.secret('KAFKA_SASL_PASSWORD', 'KAFKA_SASL_PASSWORD_FILE');
  if (mechanism === undefined) {
    // Credentials that would be silently ignored are a mistake worth stopping for.
    if (username !== undefined || password !== null)
      throw new ConfigError('KAFKA_SASL_MECHANISM', `is required with KAFKA_SASL_USERNAME and the password: one of ${SASL_MECHANISMS.join(', ')}`);
    return null;
  }
  if (!(SASL_MECHANISMS as readonly string[]).includes(mechanism)) {
    throw new ConfigError('KAFKA_SASL_MECHANISM', `expected one of ${SASL_MECHANISMS.join(', ')}, got "${given}"`);
  }
  if (username === undefined) throw new ConfigError('KAFKA_SASL_USERNAME', `is required with KAFKA_SASL_MECHANISM=${mechanism}`);
  if (password === null) throw new ConfigError('KAFKA_SASL_PASSWORD', `is required with KAFKA_SASL_MECHANISM=${mechanism} (or KAFKA_SASL_PASSWORD_FILE)`);
  return redacting({ mechanism: mechanism as KafkaSaslConfig['mechanism'], username, password }, ['password']);
}

function parsePrivateKey(pem: string, passphrase: string | null, path: string): KeyObject {
  try {
    return createPrivateKey(passphrase === null ? { key: pem, format: 'pem' } : { key: pem, format: 'pem', passphrase });
  } catch {
    // PKCS#8 ("BEGIN ENCRYPTED PRIVATE KEY") and traditional ("Proc-Type: 4,ENCRYPTED") encrypted keys.
    if (pem.includes('ENCRYPTED')) {
      if (passphrase === null)
        throw new ConfigError('KAFKA_SSL_KEY_PASSWORD', 'is required: the key in KAFKA_SSL_KEY_FILE is encrypted (or set KAFKA_SSL_KEY_PASSWORD_FILE)');
      throw new ConfigError('KAFKA_SSL_KEY_PASSWORD', 'does not decrypt the key in KAFKA_SSL_KEY_FILE');
    }
    throw new ConfigError('KAFKA_SSL_KEY_FILE', `"${path}" holds no PEM private key`);
  }
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
