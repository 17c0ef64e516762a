/** Reading a bearer token out of an `Authorization` value (RFC 6750), for every transport. */
import { InvalidTokenError } from './auth-error.js';

/** The token of `Bearer <token>`; throws InvalidTokenError when absent or malformed. */
export function bearerToken(header: string | undefined): string {
  if (header === undefined || header.trim() === '') throw new InvalidTokenError('no bearer token (Authorization: Bearer <token>)');
  const match = /^Bearer\s+(\S+)\s*$/i.exec(header);
  if (match === null) throw new InvalidTokenError('the Authorization header is not "Bearer <token>"');
  return match[1] as string;
}
