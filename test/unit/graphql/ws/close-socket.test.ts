/**
 * One place maps an error code to its WebSocket close code (`base/errors.ts`), and every socket the
 * service closes on purpose is closed through `closeSocket` with a ServiceError: the close codes
 * the clients see (4401, 4403, 4429, 4500, 1008, 1001) are the table's, never a literal at a call site.
 */
import { spawnSync } from 'node:child_process';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import WebSocket, { WebSocketServer } from 'ws';
import { closeCodeFor, graphQLErrorBody, ServiceError, type ErrorCode } from '../../../../src/base/errors.js';
import { closeReason, closeSocket } from '../../../../src/graphql/ws/close-socket.js';
import { createErrorFormatter } from '../../../../src/graphql/pipeline/format-error.js';
import { refusalError } from '../../../../src/graphql/pipeline/refusal-error.js';
import { createSilentLogger } from '../../../../src/base/logger.js';

const root = join(import.meta.dirname, '..', '..', '..', '..');

let server: WebSocketServer | undefined;
afterEach(() => server?.close());

/** The server's side of a real connection, and how its client saw it close. */
async function pair() {
  server = new WebSocketServer({ port: 0, host: '127.0.0.1' });
  await new Promise((resolve) => server!.once('listening', resolve));
  const accepted = new Promise<WebSocket>((resolve) => server!.once('connection', resolve));
  const client = new WebSocket(`ws://127.0.0.1:${(server.address() as { port: number }).port}`);
  const closed = new Promise<{ code: number; reason: string }>((resolve) => client.once('close', (code, reason) => resolve({ code, reason: String(reason) })));
  return { socket: await accepted, closed };
}

describe('closeSocket', () => {
  it.each<[ErrorCode, number]>([
    ['UNAUTHENTICATED', 4403],
    ['FORBIDDEN', 4403],
    ['NOT_ACKNOWLEDGED', 4401],
    ['AUTH_UNAVAILABLE', 4500],
    ['RATE_LIMITED', 4429],
    ['TOO_MANY_SUBSCRIPTIONS', 4429],
    ['SUBSCRIBER_TOO_SLOW', 1008],
    ['SHUTTING_DOWN', 1001],
    ['INTERNAL_SERVER_ERROR', 4500],
  ])('closes for %s with %i and the error message as the reason', async (code, closeCode) => {
    expect(closeCodeFor(code)).toBe(closeCode);
    const { socket, closed } = await pair();
    closeSocket(socket, new ServiceError(code, `because of ${code}`));
    expect(await closed).toEqual({ code: closeCode, reason: `because of ${code}` });
  });

  it('cuts a reason to the 123 bytes a close frame allows', async () => {
    const long = 'é'.repeat(100);
    expect(Buffer.byteLength(closeReason(long))).toBeLessThanOrEqual(123);
    const { socket, closed } = await pair();
    closeSocket(socket, new ServiceError('FORBIDDEN', long));
    expect((await closed).reason).toBe(closeReason(long));
  });

  it('is the only place in src/ that closes a socket with a code of its own', () => {
    // graphql-ws's protocol server closes sockets itself through the binding's `close` (its own 44xx
    // for a message out of turn); every other close names a ServiceError.
    // git grep exits 1 when nothing matches: read its output whatever its status.
    const hits = spawnSync('git', ['grep', '-n', '-E', String.raw`\.close\((CloseCode\.|[0-9]{4}|[A-Z_]+_CODE)`, '--', 'src'], { cwd: root, encoding: 'utf8' })
      .stdout.split('\n')
      .filter(Boolean);
    expect(hits.filter((hit) => !hit.startsWith('src/graphql/ws/close-socket.ts:'))).toEqual([]);
  });
});

describe('one GraphQL body per ServiceError', () => {
  it.each<ErrorCode>(['UNAUTHENTICATED', 'RATE_LIMITED', 'SHUTTING_DOWN', 'QUERY_TOO_DEEP', 'STORE_UNAVAILABLE'])(
    'the lifecycle’s error edge formats a %s refusal as the /graphql guards answer it',
    (code) => {
      const error = new ServiceError(code, `refused: ${code}`, { details: { limit: 3 } });
      const edge = createErrorFormatter({ debug: false, logger: createSilentLogger() });
      const refused = refusalError(error);
      expect(edge(refused.toJSON(), refused)).toEqual(graphQLErrorBody(error).errors[0]);
    },
  );
});
