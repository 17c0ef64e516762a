/**
 * TLS material made for one test run with `openssl`: a CA, a broker certificate it signed for
 * 127.0.0.1 and localhost, a client certificate for mutual TLS, and a second CA that signed
 * nothing the broker presents (to prove an untrusted certificate is refused). Files are PEM, the
 * format both Node and Kafka (`ssl.keystore.type=PEM`) read.
 */
import { execFile } from 'node:child_process';
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';

/** Paths of the files made by {@link createTestPki}. */
export interface TestPki {
  readonly dir: string;
  /** The CA that signed the broker and client certificates. */
  readonly caFile: string;
  /** A CA that signed nothing here. */
  readonly otherCaFile: string;
  /** The broker's private key and certificate chain in one PEM file (a Kafka PEM keystore). */
  readonly serverKeystoreFile: string;
  /** The same server certificate (127.0.0.1, localhost) and key as separate PEM files (Redis reads these). */
  readonly serverCertFile: string;
  readonly serverKeyFile: string;
  readonly clientCertFile: string;
  readonly clientKeyFile: string;
  /** The same client key, encrypted with {@link TestPki.clientKeyPassword}. */
  readonly encryptedClientKeyFile: string;
  readonly clientKeyPassword: string;
  remove(): Promise<void>;
}

const run = promisify(execFile);

async function openssl(dir: string, args: string[]): Promise<void> {
  try {
    await run('openssl', args, { cwd: dir });
  } catch (error) {
    const e = error as Error & { stderr?: string };
    throw new Error(`openssl ${args[0]} failed: ${e.message}\n${e.stderr ?? ''}`, { cause: error });
  }
}

/** EC P-256 keys: quick to make, and both Node and Java accept them. */
const NEW_KEY = ['-newkey', 'ec', '-pkeyopt', 'ec_paramgen_curve:prime256v1', '-nodes'];

async function makeCa(dir: string, name: string): Promise<void> {
  await openssl(dir, [
    'req',
    '-x509',
    ...NEW_KEY,
    '-keyout',
    `${name}.key`,
    '-out',
    `${name}.pem`,
    '-days',
    '2',
    '-subj',
    `/CN=${name}`,
    '-addext',
    'basicConstraints=critical,CA:TRUE',
    '-addext',
    'keyUsage=critical,keyCertSign,cRLSign',
  ]);
}

async function makeLeaf(dir: string, name: string, ca: string, extensions: string): Promise<void> {
  await openssl(dir, ['req', ...NEW_KEY, '-keyout', `${name}.key`, '-out', `${name}.csr`, '-subj', `/CN=${name}`]);
  await writeFile(join(dir, `${name}.ext`), extensions);
  await openssl(dir, [
    'x509',
    '-req',
    '-in',
    `${name}.csr`,
    '-CA',
    `${ca}.pem`,
    '-CAkey',
    `${ca}.key`,
    '-CAcreateserial',
    '-out',
    `${name}.pem`,
    '-days',
    '2',
    '-extfile',
    `${name}.ext`,
  ]);
}

/** Makes the CA, broker and client material in a new temporary folder. */
export async function createTestPki(): Promise<TestPki> {
  const dir = await mkdtemp(join(tmpdir(), 'pki-'));
  await makeCa(dir, 'test-ca');
  await makeCa(dir, 'other-ca');
  await makeLeaf(dir, 'broker', 'test-ca', 'subjectAltName=IP:127.0.0.1,DNS:localhost\nextendedKeyUsage=serverAuth\n');
  await makeLeaf(dir, 'client', 'test-ca', 'extendedKeyUsage=clientAuth\n');
  const clientKeyPassword = 'client-key-passphrase';
  await openssl(dir, ['pkcs8', '-topk8', '-v2', 'aes-256-cbc', '-in', 'client.key', '-out', 'client-encrypted.key', '-passout', `pass:${clientKeyPassword}`]);
  // Kafka's PEM keystore: the private key (PKCS#8) followed by the certificate chain.
  const keystore = join(dir, 'broker-keystore.pem');
  await writeFile(
    keystore,
    [await readFile(join(dir, 'broker.key'), 'utf8'), await readFile(join(dir, 'broker.pem'), 'utf8'), await readFile(join(dir, 'test-ca.pem'), 'utf8')].join(
      '',
    ),
  );
  return {
    dir,
    caFile: join(dir, 'test-ca.pem'),
    otherCaFile: join(dir, 'other-ca.pem'),
    serverKeystoreFile: keystore,
    serverCertFile: join(dir, 'broker.pem'),
    serverKeyFile: join(dir, 'broker.key'),
    clientCertFile: join(dir, 'client.pem'),
    clientKeyFile: join(dir, 'client.key'),
    encryptedClientKeyFile: join(dir, 'client-encrypted.key'),
    clientKeyPassword,
    remove: () => rm(dir, { recursive: true, force: true }),
  };
}
