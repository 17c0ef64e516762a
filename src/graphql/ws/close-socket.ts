/**
 * How the service ends a WebSocket: for a ServiceError, with its code's close code (the table in
 * `base/errors.ts`, the one place codes meet their wire forms) and its message as the reason. Every
 * socket the service closes on purpose is closed here; graphql-ws closes the others itself (its
 * protocol's 44xx for a message out of turn).
 */
import type { WebSocket } from 'ws';
import { closeCodeFor, type ServiceError } from '../../base/errors.js';
import { flushHeldFrames } from './held-frames.js';

/**
 * Closes `socket` for `error`: its code's close code, its message as the reason; the frames held
 * for it leave first (no data may follow the close frame).
 */
export function closeSocket(socket: WebSocket, error: ServiceError): void {
  flushHeldFrames(socket);
  socket.close(closeCodeFor(error.code), closeReason(error.message));
}

/** Close reasons are limited to 123 bytes by the WebSocket protocol. */
export const closeReason = (text: string) => (Buffer.byteLength(text) <= 123 ? text : `${Buffer.from(text).subarray(0, 120).toString()}...`);
