/**
 * REDIS_URL as managed Redis services require it: TLS (`rediss://`, with a private CA in
 * REDIS_TLS_CA_FILE) and a password, against real private Redis servers started for this file.
 * The state is built the way a process builds it (loadConfig, then createResultLogFromConfig).
 */
import { Writable } from 'node:stream';
import { pino } from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadConfig } from '../../src/config/config.js';
import { createSilentLogger } from '../../src/base/logger.js';
import { createResultLogFromConfig } from '../../src/app/result-log-from-config.js';
import { eventually } from '../support/graphql.js';
import { startPrivateRedis, type PrivateRedis } from '../support/redis-server.js';
import { createTestPki, type TestPki } from '../support/tls.js';
import { incoming, uniqueId } from './storage-contract.js';

const PASSWORD = 'correct horse battery staple';
let pki: TestPki;
let tlsRedis: PrivateRedis;
let plainRedis: PrivateRedis;

beforeAll(async () => {
  pki = await createTestPki();
  tlsRedis = await startPrivateRedis({ password: PASSWORD, tls: { certFile: pki.serverCertFile, keyFile: pki.serverKeyFile, caFile: pki.caFile } });
  plainRedis = await startPrivateRedis({ password: PASSWORD });
});

afterAll(async () => {
  await tlsRedis?.stop();
  await plainRedis?.stop();
  await pki?.remove();
});

const stateFor = (env: Record<string, string>, logger = createSilentLogger()) =>
  createResultLogFromConfig(loadConfig({ STATE_STORE: 'redis', REDIS_KEY_PREFIX: 'conn', ...env }), logger);

describe('REDIS_URL with TLS and a password', () => {
  it('stores and follows over rediss:// with a password, trusting the CA of REDIS_TLS_CA_FILE', async () => {
    expect(tlsRedis.url).toMatch(/^rediss:\/\/:[^@]+@127\.0\.0\.1:\d+$/);
    const state = stateFor({ REDIS_URL: tlsRedis.url, REDIS_TLS_CA_FILE: pki.caFile });
    try {
      await eventually(() => state.log.check().then(() => true), 10_000, 'the TLS connection');
      const id = uniqueId('tls');
      await state.log.create({ correlationId: id, input: { over: 'tls' }, owner: 'alice' });
      const follower = await state.log.follow(id, { queueLimit: 10 });
      await state.log.append([incoming(id, { sequence: 1 }), incoming(id, { sequence: 2, final: true })]);
      const delivered: Array<number | null> = [];
      for (let next = await follower.next(); next.done !== true; next = await follower.next()) delivered.push(next.value.sequence);
      expect(delivered).toEqual([1, 2]);
      expect(await state.log.get(id)).toMatchObject({ status: 'COMPLETED', input: { over: 'tls' }, owner: 'alice' });
    } finally {
      await state.dispose();
    }
  });

  it('authenticates with the password of a plain redis:// URL', async () => {
    const state = stateFor({ REDIS_URL: plainRedis.url });
    try {
      await eventually(() => state.log.check().then(() => true), 10_000, 'the connection');
      const id = uniqueId('plain');
      expect((await state.log.append([incoming(id, { sequence: 1 })])).map((r) => r.outcome)).toEqual(['inserted']);
    } finally {
      await state.dispose();
    }
  });

  it('is unavailable with a wrong password, and says so without the password in errors or logs', async () => {
    const lines: string[] = [];
    const sink = new Writable({
      write(chunk: Buffer, _encoding, done) {
        lines.push(chunk.toString());
        done();
      },
    });
    const wrong = 'not-the-password-7d1c';
    const state = stateFor({ REDIS_URL: plainRedis.url.replace(encodeURIComponent(PASSWORD), wrong) }, pino({ level: 'debug' }, sink));
    try {
      await eventually(() => lines.some((line) => /WRONGPASS|NOAUTH|auth/i.test(line)), 10_000, 'the refusal to be logged');
      const error = (await state.log.check().catch((e: unknown) => e)) as Error & { code?: string; cause?: Error };
      expect(error.code).toBe('STORE_UNAVAILABLE');
      expect(`${error.message} ${error.cause?.message ?? ''}`).not.toContain(wrong);
      expect(lines.join('')).not.toContain(wrong);
    } finally {
      await state.dispose();
    }
  });

  it('refuses the server certificate when REDIS_TLS_CA_FILE names another CA', async () => {
    const state = stateFor({ REDIS_URL: tlsRedis.url, REDIS_TLS_CA_FILE: pki.otherCaFile });
    try {
      await new Promise((resolve) => setTimeout(resolve, 500));
      await expect(state.log.check()).rejects.toMatchObject({ code: 'STORE_UNAVAILABLE' });
    } finally {
      await state.dispose();
    }
  });

  it('names the variable of a bad setting, without repeating the password', () => {
    const secret = 's3cret-in-url';
    const bad = (env: Record<string, string>) => {
      try {
        loadConfig({ STATE_STORE: 'redis', ...env });
      } catch (error) {
        return (error as Error).message;
      }
      throw new Error('accepted');
    };
    const scheme = bad({ REDIS_URL: `http://:${secret}@127.0.0.1:6379` });
    expect(scheme).toMatch(/REDIS_URL/);
    expect(scheme).not.toContain(secret);
    const unparsable = bad({ REDIS_URL: `rediss://:${secret}@` });
    expect(unparsable).toMatch(/REDIS_URL/);
    expect(unparsable).not.toContain(secret);
    expect(bad({ REDIS_URL: 'redis://127.0.0.1:6379', REDIS_TLS_CA_FILE: pki.caFile })).toMatch(/REDIS_TLS_CA_FILE.*rediss:\/\//);
    expect(bad({ REDIS_URL: 'rediss://127.0.0.1:6379', REDIS_TLS_CA_FILE: `${pki.dir}/missing.pem` })).toMatch(/REDIS_TLS_CA_FILE.*cannot read/);
    // A memory process never connects, so its REDIS_URL is not checked.
    expect(loadConfig({ STATE_STORE: 'memory', REDIS_URL: 'anything' }).resultLog.kind).toBe('memory');
  });
});
