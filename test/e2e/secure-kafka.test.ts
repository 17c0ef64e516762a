/**
 * The service on a secured Apache Kafka (KRaft, the pinned 4.x): a SASL_SSL listener offering
 * SCRAM-SHA-512, SCRAM-SHA-256 and PLAIN, and an SSL listener that requires a client certificate,
 * with a CA and certificates made for this run. Each service is a real process whose whole log is
 * captured: it connects and works with every mechanism; a wrong password or an untrusted broker
 * certificate is named in the log and in `/readyz`'s consumer check while the process stays up,
 * ready (it serves its API from the store) and live (fixing the secret is enough); and no secret ever
 * appears in the log, in `/readyz` or in an error answer.
 */
import { randomBytes } from 'node:crypto';
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { Kafka, logLevel } from 'kafkajs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startKafka, type KafkaCluster } from '../../tools/kafka/kafka-cluster.js';
import { createSimulator, type Simulator } from '../../tools/simulator/simulator.js';
import { eventually, postGraphQL } from '../support/graphql.js';
import { createTestProducer, type TestProducer } from '../support/kafka.js';
import { spawnService, waitReady, type ServiceProcess } from '../support/process.js';
import { uniqueTopics } from '../support/service.js';
import { createTestPki, type TestPki } from '../support/tls.js';
import { authedFetch } from '../support/tokens.js';

const topics = uniqueTopics('secure');
const deadLetterTopic = `${topics.results}-dlq`;
const secret = (name: string) => `${name}-${randomBytes(9).toString('hex')}`;
const USERS = {
  alice: { mechanism: 'SCRAM-SHA-512', password: secret('alice') },
  bob: { mechanism: 'SCRAM-SHA-256', password: secret('bob') },
  carol: { mechanism: 'PLAIN', password: secret('carol') },
} as const;
const WRONG_PASSWORD = secret('wrong');

let pki: TestPki;
let cluster: KafkaCluster;
let producer: TestProducer;
let simulator: Simulator;
const processes: ServiceProcess[] = [];
/** Every secret of this run: none may ever be printed. */
let secrets: string[];

beforeAll(async () => {
  pki = await createTestPki();
  const scram = 'org.apache.kafka.common.security.scram.ScramLoginModule required;';
  cluster = await startKafka({
    nodes: 1,
    scramUsers: [
      { mechanism: 'SCRAM-SHA-512', name: 'alice', password: USERS.alice.password },
      { mechanism: 'SCRAM-SHA-256', name: 'bob', password: USERS.bob.password },
    ],
    listeners: [
      {
        name: 'SASL_SSL',
        protocol: 'SASL_SSL',
        properties: {
          'listener.name.sasl_ssl.ssl.keystore.type': 'PEM',
          'listener.name.sasl_ssl.ssl.keystore.location': pki.serverKeystoreFile,
          'listener.name.sasl_ssl.sasl.enabled.mechanisms': 'SCRAM-SHA-512,SCRAM-SHA-256,PLAIN',
          'listener.name.sasl_ssl.scram-sha-512.sasl.jaas.config': scram,
          'listener.name.sasl_ssl.scram-sha-256.sasl.jaas.config': scram,
          // PLAIN as managed services offer it: users listed on the listener itself.
          'listener.name.sasl_ssl.plain.sasl.jaas.config': `org.apache.kafka.common.security.plain.PlainLoginModule required user_carol="${USERS.carol.password}";`,
        },
      },
      {
        name: 'SSL',
        protocol: 'SSL',
        properties: {
          'listener.name.ssl.ssl.keystore.type': 'PEM',
          'listener.name.ssl.ssl.keystore.location': pki.serverKeystoreFile,
          'listener.name.ssl.ssl.truststore.type': 'PEM',
          'listener.name.ssl.ssl.truststore.location': pki.caFile,
          'listener.name.ssl.ssl.client.auth': 'required',
        },
      },
    ],
  });
  await createTopics([
    { topic: topics.results, numPartitions: 2 },
    { topic: topics.requests, numPartitions: 1 },
    { topic: deadLetterTopic, numPartitions: 1 },
  ]);
  // The test side plays the external system over the plaintext listener.
  producer = await createTestProducer(cluster.bootstrapServers);
  simulator = createSimulator({
    brokers: cluster.bootstrapServers,
    requestsTopic: topics.requests,
    resultsTopic: topics.results,
    groupId: `${topics.group}-simulator`,
    intervalMs: 20,
    steps: 3,
  });
  await simulator.start();
  // The first line of each PEM body is as secret as the whole key.
  const keyLine = (file: string) => readFileSync(file, 'utf8').split('\n')[1] as string;
  secrets = [
    ...Object.values(USERS).map((u) => u.password),
    WRONG_PASSWORD,
    pki.clientKeyPassword,
    keyLine(pki.clientKeyFile),
    keyLine(pki.encryptedClientKeyFile),
  ];
}, 180_000);

afterAll(async () => {
  for (const svc of processes) svc.kill('SIGKILL');
  await Promise.all(processes.map((svc) => svc.exited));
  await simulator?.dispose();
  await producer?.disconnect();
  await cluster?.stop();
  await pki?.remove();
});

/** Creates the topics; the helper waits until each partition has a leader. */
async function createTopics(specs: Array<{ topic: string; numPartitions: number }>): Promise<void> {
  for (const { topic, numPartitions } of specs) await cluster.createTopic(topic, numPartitions);
}

/** Starts a service process on the given listener with `env`, in a consumer group of its own. */
async function start(name: string, listener: 'SASL_SSL' | 'SSL', env: Record<string, string>): Promise<ServiceProcess> {
  const svc = await spawnService(name, {
    KAFKA_BROKERS: cluster.listenerServers(listener).join(','),
    KAFKA_RESULTS_TOPIC: topics.results,
    KAFKA_REQUESTS_TOPIC: topics.requests,
    KAFKA_GROUP_ID: `${topics.group}-${name}`,
    KAFKA_FETCH_MAX_WAIT_MS: '100',
    KAFKA_PRODUCE_TIMEOUT_MS: '3000',
    ...env,
  });
  processes.push(svc);
  return svc;
}

async function stop(svc: ServiceProcess): Promise<void> {
  svc.kill('SIGTERM');
  await svc.exited;
}

/** Starts a test over REST and waits until the simulator's results were consumed and can be queried. */
async function startAndComplete(svc: ServiceProcess): Promise<string> {
  const response = await authedFetch(`${svc.url}/tests`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ name: 'secured' }),
  });
  expect(response.status).toBe(202);
  const { correlationId } = (await response.json()) as { correlationId: string };
  const read = `query($id: ID!) { test(correlationId: $id) { status messageCount messages(first: 10) { nodes { sequence } } } }`;
  const test = await eventually(
    async () => {
      const t = (await postGraphQL(svc.url, read, { id: correlationId })).body.data?.test;
      return t?.status === 'COMPLETED' ? t : undefined;
    },
    30_000,
    `test ${correlationId} to complete`,
  );
  // Steps 1..3, then the final message 4; the simulator's duplicate of 3 is stored once.
  expect(test).toMatchObject({ status: 'COMPLETED', messageCount: 4 });
  expect(test.messages.nodes.map((m: { sequence: number }) => m.sequence)).toEqual([1, 2, 3, 4]);
  return correlationId;
}

function expectNoSecret(text: string): void {
  for (const s of secrets) expect(text).not.toContain(s);
}

/** The log lines (parsed) of a process that match `predicate`. */
function logLines(svc: ServiceProcess, predicate: (line: Record<string, unknown>) => boolean): Array<Record<string, unknown>> {
  return svc
    .output()
    .split('\n')
    .filter((line) => line.startsWith('{'))
    .map((line) => JSON.parse(line) as Record<string, unknown>)
    .filter(predicate);
}

const SASL_SSL = () => ({ KAFKA_SSL: 'true', KAFKA_SSL_CA_FILE: pki.caFile });

describe('secured Kafka', () => {
  it('SASL_SSL with SCRAM-SHA-512: start → results consumed → query, and a malformed record reaches the dead-letter topic', { timeout: 120_000 }, async () => {
    const svc = await start('scram512', 'SASL_SSL', {
      ...SASL_SSL(),
      KAFKA_SASL_MECHANISM: 'scram-sha-512',
      KAFKA_SASL_USERNAME: 'alice',
      KAFKA_SASL_PASSWORD: USERS.alice.password,
      KAFKA_DEAD_LETTER_TOPIC: deadLetterTopic,
    });
    await waitReady(svc);
    // Request producer and consumer, both over SASL_SSL.
    await startAndComplete(svc);

    // The dead-letter producer, over SASL_SSL too.
    const poisonKey = secret('poison');
    await producer.send(topics.results, [{ key: poisonKey, value: 'not json' }]);
    const kafka = new Kafka({ clientId: 'dlq-reader', brokers: cluster.bootstrapServers, logLevel: logLevel.NOTHING });
    const consumer = kafka.consumer({ groupId: `${topics.group}-dlq-reader` });
    const seen: string[] = [];
    await consumer.connect();
    try {
      await consumer.subscribe({ topic: deadLetterTopic, fromBeginning: true });
      await consumer.run({ eachMessage: async ({ message }) => void seen.push(message.key?.toString() ?? '') });
      await eventually(() => seen.includes(poisonKey), 30_000, 'the malformed record on the dead-letter topic');
    } finally {
      await consumer.disconnect();
    }

    const settings = logLines(svc, (l) => l.msg === 'broker connection settings')[0];
    expect(settings).toMatchObject({ ssl: true, verifyCertificate: true, sasl: 'scram-sha-512', username: 'alice' });
    await stop(svc);
    expectNoSecret(svc.output());
  });

  it.each([
    ['scram-sha-256', 'bob', 'file'],
    ['plain', 'carol', 'variable'],
  ] as const)('SASL_SSL with %s (user %s, password from a %s) connects and works', { timeout: 120_000 }, async (mechanism, user, from) => {
    const password = USERS[user].password;
    let passwordEnv: Record<string, string> = { KAFKA_SASL_PASSWORD: password };
    if (from === 'file') {
      const file = join(pki.dir, `${user}-password`);
      writeFileSync(file, `${password}\n`);
      passwordEnv = { KAFKA_SASL_PASSWORD_FILE: file };
    }
    const svc = await start(mechanism, 'SASL_SSL', { ...SASL_SSL(), KAFKA_SASL_MECHANISM: mechanism, KAFKA_SASL_USERNAME: user, ...passwordEnv });
    await waitReady(svc);
    await startAndComplete(svc);
    await stop(svc);
    expectNoSecret(svc.output());
  });

  it('mutual TLS without SASL: a client certificate whose key is encrypted, its passphrase from a file', { timeout: 120_000 }, async () => {
    const passphraseFile = join(pki.dir, 'client-key-passphrase');
    writeFileSync(passphraseFile, pki.clientKeyPassword);
    const svc = await start('mtls', 'SSL', {
      KAFKA_SSL_CA_FILE: pki.caFile,
      KAFKA_SSL_CERT_FILE: pki.clientCertFile,
      KAFKA_SSL_KEY_FILE: pki.encryptedClientKeyFile,
      KAFKA_SSL_KEY_PASSWORD_FILE: passphraseFile,
    });
    await waitReady(svc);
    await startAndComplete(svc);
    expect(logLines(svc, (l) => l.msg === 'broker connection settings')[0]).toMatchObject({ ssl: true, clientCertificate: true, sasl: false });
    await stop(svc);
    expectNoSecret(svc.output());
  });

  it(
    'a wrong password: the log and /readyz say authentication failed, requests fail clearly, the process stays up, the password is never shown',
    { timeout: 120_000 },
    async () => {
      const started = Date.now();
      const svc = await start('wrong-password', 'SASL_SSL', {
        ...SASL_SSL(),
        KAFKA_SASL_MECHANISM: 'scram-sha-512',
        KAFKA_SASL_USERNAME: 'alice',
        KAFKA_SASL_PASSWORD: WRONG_PASSWORD,
      });
      const readyz = await eventually(
        async () => {
          const response = await fetch(`${svc.url}/readyz`);
          const body = (await response.json()) as { checks: { consumer: string } };
          return response.status === 200 && body.checks.consumer.includes('authentication failed') ? { status: response.status, body } : undefined;
        },
        60_000,
        '/readyz to name the authentication failure',
      );
      console.info(`wrong password named in /readyz after ${Date.now() - started} ms (process start included)`);
      expect(readyz.body.checks.consumer).toMatch(/^crashed: authentication failed: SASL SCRAM SHA512 authentication failed: .*invalid credentials/);
      // The log line may still be in the pipe when /readyz answers.
      await eventually(
        () => logLines(svc, (l) => l.level === 'error' && typeof l.reason === 'string' && l.reason.startsWith('authentication failed')).length > 0,
        10_000,
        'the log line',
      );

      // A request cannot be handed over: a clear 503, not a hang.
      const response = await authedFetch(`${svc.url}/tests`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{}' });
      expect(response.status).toBe(503);
      const problem = await response.text();
      expect(problem).toContain('BROKER_UNAVAILABLE');

      // It keeps trying (the password may be fixed in the secret store) and says so each time.
      await eventually(() => logLines(svc, (l) => l.msg === 'consumer stopped; starting a new one').length >= 2, 30_000, 'a second attempt');
      expect(svc.child.exitCode).toBeNull();
      // Not a reason to restart the process either: liveness stays 200.
      expect((await fetch(`${svc.url}/healthz`)).status).toBe(200);
      await stop(svc);
      expectNoSecret(svc.output());
      expectNoSecret(JSON.stringify(readyz.body));
      expectNoSecret(problem);
    },
  );

  const ALICE = () => ({ KAFKA_SASL_MECHANISM: 'scram-sha-512', KAFKA_SASL_USERNAME: 'alice', KAFKA_SASL_PASSWORD: USERS.alice.password });
  it.each([
    {
      label: 'no CA given',
      listener: 'SASL_SSL',
      env: () => ({ KAFKA_SSL: 'true', ...ALICE() }),
      reason: /^crashed: server certificate not trusted: self-signed certificate in certificate chain \[SELF_SIGNED_CERT_IN_CHAIN\] \(set KAFKA_SSL_CA_FILE/,
    },
    {
      label: 'server name not in the certificate',
      listener: 'SASL_SSL',
      env: () => ({ KAFKA_SSL_CA_FILE: pki.caFile, KAFKA_SSL_SERVERNAME: 'kafka.wrong.example', ...ALICE() }),
      reason: /^crashed: server certificate not trusted: .*kafka\.wrong\.example.* \[ERR_TLS_CERT_ALTNAME_INVALID\] \(.*KAFKA_SSL_SERVERNAME/,
    },
    {
      label: 'no client certificate',
      listener: 'SSL',
      env: () => ({ KAFKA_SSL_CA_FILE: pki.caFile }),
      reason: /^crashed: client certificate refused by the broker \[ERR_SSL_[\w/]+\] \(set KAFKA_SSL_CERT_FILE and KAFKA_SSL_KEY_FILE/,
    },
  ] as const)(
    'TLS refused, $label: the log and /readyz name the cause, the process stays up',
    { timeout: 120_000 },
    async ({ label, listener, env, reason }) => {
      const started = Date.now();
      const svc = await start(`tls-${randomBytes(3).toString('hex')}`, listener, env());
      const cause = await eventually(
        async () => {
          const response = await fetch(`${svc.url}/readyz`);
          const body = (await response.json()) as { checks: { consumer: string } };
          return response.status === 200 && body.checks.consumer.startsWith('crashed: ') ? body.checks.consumer : undefined;
        },
        90_000,
        '/readyz to name the cause',
      );
      console.info(`${label}: named in /readyz after ${Date.now() - started} ms (process start included)`);
      expect(cause).toMatch(reason);
      const logged = cause.slice('crashed: '.length);
      // The log line may still be in the pipe when /readyz answers.
      await eventually(() => logLines(svc, (l) => l.level === 'error' && l.reason === logged).length > 0, 10_000, 'the log line');
      expect(svc.child.exitCode).toBeNull();
      await stop(svc);
      expectNoSecret(svc.output());
    },
  );
});
