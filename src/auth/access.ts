/** Who may do what: scopes per operation, and ownership of tests. */
import type { TestRecord } from '../domain/types.js';
import { InsufficientScopeError } from './auth-error.js';
import { SCOPES, hasScope, type Principal } from './principal.js';

/** Access rules of one deployment. */
export interface AccessPolicy {
  /** Throws FORBIDDEN unless the principal holds `scope`. */
  requireScope(principal: Principal, scope: string): void;
  /**
   * True when the principal may see the test: it started it, or holds the admin scope. Anyone else
   * gets the same answer as for an unknown id, so ids of other subjects' tests leak nothing.
   */
  canSee(principal: Principal, test: Pick<TestRecord, 'owner'>): boolean;
  /** True when the principal sees every test (it holds the admin scope). */
  seesAll(principal: Principal): boolean;
  /** The scope an operation of this kind needs. */
  scopeFor(operation: 'query' | 'mutation' | 'subscription'): string;
}

/** Creates the policy with the configured admin scope. */
export function createAccessPolicy(options: { adminScope: string }): AccessPolicy {
  return {
    requireScope(principal, scope) {
      if (!hasScope(principal, scope)) throw new InsufficientScopeError(scope);
    },
    canSee(principal, test) {
      return test.owner === principal.subject || hasScope(principal, options.adminScope);
    },
    seesAll(principal) {
      return hasScope(principal, options.adminScope);
    },
    scopeFor(operation) {
      return operation === 'mutation' ? SCOPES.write : SCOPES.read;
    },
  };
}
