/** Reading a bearer token out of an `Authorization` value (RFC 6750), for every transport. */
import type { IncomingMessage } from 'node:http';
import { InvalidTokenError } from './auth-error.js';

/** The token of `Bearer <token>`; throws InvalidTokenError when absent or malformed. */
export function bearerToken(header: string | undefined): string {
  if (header === undefined || header.trim() === '') throw new InvalidTokenError('no bearer token (Authorization: Bearer <token>)');
  const match = /^Bearer\s+(\S+)\s*$/i.exec(header);
  if (match === null) throw new InvalidTokenError('the Authorization header is not "Bearer <token>"');
  return match[1] as string;
}

/**
 * Drops the bearer token's text from a request that stays open (an event stream, a multipart
 * subscription) once its caller is verified: Node keeps the request, its headers and their raw list
 * for as long as the response lasts, where nothing reads the token again, and a token is the
 * largest thing a client sends (1–2 KB from most issuers). The header stays, empty.
 */
export function forgetBearer(req: IncomingMessage): void {
  const raw = req.rawHeaders;
  for (let i = 0; i + 1 < raw.length; i += 2) if (raw[i]?.toLowerCase() === 'authorization') raw[i + 1] = '';
  if (req.headers.authorization !== undefined) req.headers.authorization = '';
}
