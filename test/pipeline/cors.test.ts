/// <reference lib="dom.iterable" />
/**
 * CORS over real HTTP: preflights are answered without a token, listed origins get CORS headers on
 * every answer (errors included), other origins get none, and the same list governs the WebSocket
 * Origin check.
 */
import { WebSocket } from 'ws';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startPipelineService, type TestService } from '../support/service.js';
import { CORS_MAX_AGE_SECONDS } from '../../src/http/cors.js';
import { defaultToken } from '../support/tokens.js';

const LISTED = 'http://localhost:5173';
const OTHER = 'https://elsewhere.example';
let svc: TestService;

beforeAll(async () => {
  svc = await startPipelineService({ env: { CORS_ALLOWED_ORIGINS: `https://app.example,${LISTED}` } });
});

afterAll(() => svc?.stop());

const preflight = (path: string, origin: string, method = 'POST') =>
  fetch(`${svc.url}${path}`, {
    method: 'OPTIONS',
    headers: { origin, 'access-control-request-method': method, 'access-control-request-headers': 'authorization,content-type' },
  });

const corsHeaders = (response: Response) => [...response.headers.keys()].filter((name) => name.startsWith('access-control-'));
const varyOf = (response: Response) => (response.headers.get('vary') ?? '').split(',').map((v) => v.trim().toLowerCase());

describe('CORS', () => {
  it.each(['/graphql', '/tests', '/tests/some-id'])("answers a listed origin's preflight of %s without a token", async (path) => {
    const response = await preflight(path, LISTED, path === '/tests/some-id' ? 'GET' : 'POST');
    expect(response.status).toBe(204);
    expect(response.headers.get('access-control-allow-origin')).toBe(LISTED);
    expect(response.headers.get('access-control-allow-methods')?.split(',')).toEqual(expect.arrayContaining(['GET', 'POST']));
    expect(response.headers.get('access-control-allow-headers')?.toLowerCase().split(',')).toEqual(expect.arrayContaining(['authorization', 'content-type']));
    expect(response.headers.get('access-control-max-age')).toBe(String(CORS_MAX_AGE_SECONDS));
    expect(response.headers.get('access-control-allow-credentials')).toBeNull();
    expect(varyOf(response)).toContain('origin');
    expect(await response.text()).toBe('');
  });

  it("answers an unlisted origin's preflight with no CORS header at all, so the browser blocks the call", async () => {
    for (const origin of [OTHER, 'http://localhost:5174', 'null']) {
      const response = await preflight('/graphql', origin);
      expect(response.status).toBe(204);
      expect(corsHeaders(response)).toEqual([]);
      expect(varyOf(response)).toContain('origin');
    }
  });

  it('lets a listed origin read the answer of a call with a token, and the headers it needs', async () => {
    const token = await defaultToken();
    const response = await fetch(`${svc.url}/graphql`, {
      method: 'POST',
      headers: { origin: LISTED, authorization: `Bearer ${token}`, 'content-type': 'application/json' },
      body: JSON.stringify({ query: '{ __typename }' }),
    });
    expect(response.status).toBe(200);
    expect(await response.json()).toEqual({ data: { __typename: 'Query' } });
    expect(response.headers.get('access-control-allow-origin')).toBe(LISTED);
    expect(response.headers.get('access-control-expose-headers')?.toLowerCase().split(',')).toEqual(expect.arrayContaining(['location', 'www-authenticate']));
    expect(varyOf(response)).toContain('origin');
  });

  it('lets a listed origin read why a call was refused (401 with WWW-Authenticate exposed)', async () => {
    const response = await fetch(`${svc.url}/tests/anything`, { headers: { origin: LISTED } });
    expect(response.status).toBe(401);
    expect(response.headers.get('access-control-allow-origin')).toBe(LISTED);
    expect(response.headers.get('www-authenticate')).toMatch(/^Bearer/);
  });

  it('sends no CORS header to an unlisted origin, even on a successful call', async () => {
    const token = await defaultToken();
    const response = await fetch(`${svc.url}/graphql`, {
      method: 'POST',
      headers: { origin: OTHER, authorization: `Bearer ${token}`, 'content-type': 'application/json' },
      body: JSON.stringify({ query: '{ __typename }' }),
    });
    expect(response.status).toBe(200);
    expect(corsHeaders(response)).toEqual([]);
    expect(varyOf(response)).toContain('origin');
  });

  it('applies the same list to the WebSocket Origin check', async () => {
    const upgrade = (origin: string) =>
      new Promise<number>((resolve, reject) => {
        const socket = new WebSocket(`${svc.url.replace('http', 'ws')}/graphql`, 'graphql-transport-ws', { origin });
        socket.once('open', () => {
          socket.close();
          resolve(101);
        });
        socket.once('unexpected-response', (_req, res) => {
          socket.terminate();
          resolve(res.statusCode ?? 0);
        });
        socket.once('error', reject);
      });
    expect(await upgrade(LISTED)).toBe(101);
    expect(await upgrade(OTHER)).toBe(403);
  });
});

describe('CORS without CORS_ALLOWED_ORIGINS', () => {
  it('allows no origin by default', async () => {
    const plain = await startPipelineService({ env: { NODE_ENV: 'production' } });
    try {
      const response = await fetch(`${plain.url}/graphql`, {
        method: 'OPTIONS',
        headers: { origin: LISTED, 'access-control-request-method': 'POST', 'access-control-request-headers': 'authorization' },
      });
      expect(response.status).toBe(204);
      expect(corsHeaders(response)).toEqual([]);
    } finally {
      await plain.stop();
    }
  });
});
