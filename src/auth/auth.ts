/**
 * The seam of authentication: what the rest of the service gets from `auth/`, whichever way tokens
 * are verified (an external issuer's keys, a shared secret, or the embedded issuer).
 */
import type { RequestHandler } from 'express';
import type { Disposable } from '../process/disposable.js';
import type { VerifyAccessToken } from './principal.js';

/** The authentication side of one process; disposing it releases what the issuer holds. */
export interface Auth extends Disposable {
  readonly verifyAccessToken: VerifyAccessToken;
  /** Routes of the embedded authorization server, when this process runs one. */
  readonly issuer?: RequestHandler;
}
