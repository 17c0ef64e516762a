/** Authentication and authorization failures, with what the edges need to answer them (RFC 6750). */
import { ServiceError } from '../base/errors.js';

/** The token is missing, malformed, or fails a check: 401 `invalid_token`. */
export class InvalidTokenError extends ServiceError {
  constructor(description: string) {
    super('UNAUTHENTICATED', `Access token refused: ${description}.`, { details: { reason: description } });
    this.name = 'InvalidTokenError';
  }
}

/** The token is valid but lacks a scope: 403 `insufficient_scope`. */
export class InsufficientScopeError extends ServiceError {
  readonly scope: string;
  constructor(scope: string) {
    super('FORBIDDEN', `This operation needs the scope "${scope}".`, { details: { requiredScope: scope } });
    this.name = 'InsufficientScopeError';
    this.scope = scope;
  }
}

/**
 * The `WWW-Authenticate` challenge for an auth failure (RFC 6750 section 3). Descriptions are ours
 * and contain no quotes, so no escaping is needed beyond removing any that slip in.
 */
export function bearerChallenge(error: ServiceError): string | undefined {
  const clean = (s: string) => s.replace(/["\\]/g, '');
  if (error instanceof InsufficientScopeError) {
    return `Bearer error="insufficient_scope", error_description="${clean(error.message)}", scope="${clean(error.scope)}"`;
  }
  if (error.code === 'UNAUTHENTICATED') return `Bearer error="invalid_token", error_description="${clean(error.message)}"`;
  return undefined;
}
