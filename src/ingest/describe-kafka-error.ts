/**
 * One line that names the cause of a broker connection failure, for the log and for `/readyz`.
 * kafkajs reports a refused password or an untrusted certificate in its own words, often wrapped
 * in a retry error; operators need the cause and the setting that fixes it. The line never holds a
 * secret: kafkajs's messages carry none, and nothing from the configuration is added but names.
 */

/** Node's TLS verification failures: the broker's certificate is not one this process trusts. */
const UNTRUSTED_CERTIFICATE = new Set([
  'SELF_SIGNED_CERT_IN_CHAIN',
  'DEPTH_ZERO_SELF_SIGNED_CERT',
  'UNABLE_TO_VERIFY_LEAF_SIGNATURE',
  'UNABLE_TO_GET_ISSUER_CERT',
  'UNABLE_TO_GET_ISSUER_CERT_LOCALLY',
  'CERT_UNTRUSTED',
  'CERT_SIGNATURE_FAILURE',
  'CERT_HAS_EXPIRED',
  'CERT_NOT_YET_VALID',
  'ERR_TLS_CERT_ALTNAME_INVALID',
]);

/**
 * TLS alerts from a broker that requires a client certificate and got none, or one it does not
 * trust. OpenSSL 3.2 and later (Node 22 and later) name the first two `ssl/tls alert …` where older
 * releases said `sslv3 alert …`, and Node derives the code from that name.
 */
const CLIENT_CERTIFICATE_REFUSED = new Set([
  'ERR_SSL_SSLV3_ALERT_BAD_CERTIFICATE',
  'ERR_SSL_SSLV3_ALERT_CERTIFICATE_UNKNOWN',
  'ERR_SSL_SSL/TLS_ALERT_BAD_CERTIFICATE',
  'ERR_SSL_SSL/TLS_ALERT_CERTIFICATE_UNKNOWN',
  'ERR_SSL_TLSV1_ALERT_UNKNOWN_CA',
  'ERR_SSL_TLSV13_ALERT_CERTIFICATE_REQUIRED',
]);

/**
 * The cause of `error` as one line: "authentication failed: ...", "server certificate not trusted:
 * ...", "client certificate refused ...", or else the error's own message.
 */
export function describeKafkaError(error: unknown): string {
  const chain = causes(error);
  const auth = chain.find((e) => e.name === 'KafkaJSSASLAuthenticationError');
  if (auth !== undefined) {
    return `authentication failed: ${auth.message} (check KAFKA_SASL_MECHANISM, KAFKA_SASL_USERNAME and the password)`;
  }
  const tls = chain.find((e) => typeof e.code === 'string' && UNTRUSTED_CERTIFICATE.has(e.code));
  if (tls !== undefined) {
    const hint =
      tls.code === 'ERR_TLS_CERT_ALTNAME_INVALID'
        ? 'the broker address is not a name in its certificate; see KAFKA_SSL_SERVERNAME'
        : 'set KAFKA_SSL_CA_FILE to the CA that signed it';
    return `server certificate not trusted: ${stripPrefix(tls.message)} [${tls.code}] (${hint})`;
  }
  const refused = chain.find((e) => typeof e.code === 'string' && CLIENT_CERTIFICATE_REFUSED.has(e.code));
  if (refused !== undefined) {
    return `client certificate refused by the broker [${refused.code}] (set KAFKA_SSL_CERT_FILE and KAFKA_SSL_KEY_FILE to a certificate its truststore accepts)`;
  }
  const first = chain[0];
  return first === undefined ? String(error) : first.message;
}

interface ErrorLike {
  readonly name: string;
  readonly message: string;
  readonly code?: unknown;
}

/** `error` and the errors it wraps (`cause`, kafkajs's `originalError`), outermost first. */
function causes(error: unknown): ErrorLike[] {
  const chain: ErrorLike[] = [];
  let current: unknown = error;
  while (current instanceof Error && chain.length < 10) {
    chain.push(current as ErrorLike);
    const next = (current as { cause?: unknown; originalError?: unknown }).cause ?? (current as { originalError?: unknown }).originalError;
    if (next === current) break;
    current = next;
  }
  return chain;
}

function stripPrefix(message: string): string {
  return message.replace(/^Connection error: /, '');
}
