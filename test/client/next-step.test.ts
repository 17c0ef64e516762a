/**
 * How the client library reads the end of an attempt (packages/client/src/next-step.ts): by the
 * stable codes the service ends a stream with, what it resumes, renews, waits for or stops on.
 */
import { describe, expect, it } from 'vitest';
import { nextStep } from '../../packages/client/src/next-step.js';

const error = (code: string, extensions: Record<string, unknown> = {}) => ({
  kind: 'errors' as const,
  errors: [{ message: `${code} happened`, extensions: { code, ...extensions } }],
});

describe('the next step after an attempt', () => {
  it('ends for good, completed, when the server completed the stream', () => {
    expect(nextStep({ kind: 'complete' })).toEqual({ resume: false, code: 'COMPLETED', message: 'the stream completed' });
  });

  it('stops with the code on what a resume cannot cure', () => {
    for (const code of [
      'CURSOR_EXPIRED',
      'TEST_EXPIRED',
      'NOT_FOUND',
      'FORBIDDEN',
      'BAD_USER_INPUT',
      'DELIVERY_GUARANTEE_UNSATISFIABLE',
      'GRAPHQL_VALIDATION_FAILED',
    ]) {
      expect(nextStep(error(code))).toEqual({ resume: false, code, message: `${code} happened` });
    }
    expect(nextStep({ kind: 'errors', errors: [{ message: 'no code' }] })).toMatchObject({ resume: false, code: 'UNKNOWN' });
  });

  it('resumes on what the server or the network ends, renewing the token when it was the token', () => {
    expect(nextStep(error('SHUTTING_DOWN'))).toMatchObject({ resume: true, renewToken: false });
    expect(nextStep(error('STORE_UNAVAILABLE'))).toMatchObject({ resume: true, renewToken: false });
    expect(nextStep(error('UNAUTHENTICATED'))).toMatchObject({ resume: true, renewToken: true });
    expect(nextStep({ kind: 'network', message: 'reset' })).toEqual({ resume: true, renewToken: false, reason: 'reset' });
    expect(nextStep({ kind: 'dead', afterMs: 1500 })).toEqual({ resume: true, renewToken: false, reason: 'nothing received for 1500 ms' });
  });

  it('waits as long as a rate limit says before resuming', () => {
    expect(nextStep(error('RATE_LIMITED', { retryAfterSeconds: 7 }))).toMatchObject({ resume: true, waitMs: 7000 });
    expect(nextStep({ kind: 'refused', status: 429, errors: [], retryAfterSeconds: 3 })).toMatchObject({ resume: true, waitMs: 3000 });
  });

  it('reads WebSocket close codes: 4400 and 4406 end it, 4403 renews, the rest resume', () => {
    expect(nextStep({ kind: 'closed', code: 4400, reason: 'Bad request' })).toMatchObject({ resume: false, code: 'BAD_REQUEST' });
    expect(nextStep({ kind: 'closed', code: 4406, reason: 'Subprotocol not acceptable' })).toMatchObject({ resume: false });
    expect(nextStep({ kind: 'closed', code: 4403, reason: 'Forbidden: access token expired' })).toMatchObject({ resume: true, renewToken: true });
    for (const code of [1001, 1006, 1008, 1011, 4429, 4499, 4500])
      expect(nextStep({ kind: 'closed', code, reason: '' })).toMatchObject({ resume: true, renewToken: false });
  });

  it('reads an SSE refusal by its body when it has one, else by its status', () => {
    expect(nextStep({ kind: 'refused', status: 410, errors: [], retryAfterSeconds: undefined })).toMatchObject({ resume: false, code: 'CURSOR_EXPIRED' });
    expect(nextStep({ kind: 'refused', status: 401, errors: [], retryAfterSeconds: undefined })).toMatchObject({ resume: true, renewToken: true });
    expect(nextStep({ kind: 'refused', status: 503, errors: [], retryAfterSeconds: undefined })).toMatchObject({ resume: true, renewToken: false });
    const refused = {
      kind: 'refused' as const,
      status: 503,
      errors: [{ message: 'draining', extensions: { code: 'SHUTTING_DOWN' } }],
      retryAfterSeconds: undefined,
    };
    expect(nextStep(refused)).toMatchObject({ resume: true, reason: 'SHUTTING_DOWN: draining' });
  });
});
