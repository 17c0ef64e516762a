/**
 * The scope is checked once per operation, where the lifecycle admits it (the scope-admission
 * plugin), and never again by a resolver; ownership once per test read, by the operation's context;
 * the plugin's refusals carry their codes and challenge.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { execute, parse, type ExecutionArgs, type OperationDefinitionNode } from 'graphql';
import { describe, expect, it } from 'vitest';
import { createAccessPolicy, type AccessPolicy } from '../../../../src/auth/access.js';
import { SCOPES } from '../../../../src/auth/principal.js';
import type { Transport } from '../../../../src/graphql/pipeline/operation-plugin.js';
import { scopeAdmissionPlugin } from '../../../../src/graphql/pipeline/plugins/scope-admission.js';
import { createTestPipeline } from '../../../support/pipeline.js';
import { testPrincipal } from '../../../support/principal.js';

const reader = testPrincipal();
const root = join(import.meta.dirname, '..', '..', '..', '..');
const access = createAccessPolicy({ adminScope: 'tests:admin' });
const plugin = scopeAdmissionPlugin(access);

/**
 * The plugin's admission of `query` for the reader over `transport`: of its first operation, or,
 * given `unresolvedName`, of a name that resolved to no operation.
 */
function admit(query: string, transport: Transport, unresolvedName?: string) {
  const document = parse(query);
  return plugin.onAdmit?.({
    document,
    operation: unresolvedName === undefined ? (document.definitions[0] as OperationDefinitionNode) : undefined,
    operationName: unresolvedName ?? null,
    variables: null,
    principal: reader,
    transport,
  });
}

describe('scope admission', () => {
  it('checks the scope once per operation: at admission, not again in the resolvers', async () => {
    const checked: string[] = [];
    const counting: AccessPolicy = { ...access, requireScope: (principal, scope) => (checked.push(scope), access.requireScope(principal, scope)) };
    const { pipeline, log } = createTestPipeline({ access: counting });
    await log.create({ correlationId: 'c1', owner: 'alice', input: null });
    const prepared = await pipeline.lifecycle.prepare({
      principal: reader,
      transport: 'websocket',
      params: { query: '{ a: test(correlationId: "c1") { correlationId } b: tests(correlationIds: ["c1"]) { correlationId } }' },
    });
    const result = await execute(prepared as ExecutionArgs);
    expect(result).toEqual({ data: { a: { correlationId: 'c1' }, b: [{ correlationId: 'c1' }] } });
    expect(checked).toEqual([SCOPES.read]);
    await log.dispose();
  });

  it("decides ownership once per test read, in the operation's context: another subject's test is answered as unknown", async () => {
    const seen: string[] = [];
    const counting: AccessPolicy = { ...access, canSee: (principal, test) => (seen.push(String(test.owner)), access.canSee(principal, test)) };
    const { pipeline, log } = createTestPipeline({ access: counting });
    await log.create({ correlationId: 'mine', owner: 'alice', input: null });
    await log.create({ correlationId: 'theirs', owner: 'bob', input: null });
    const prepared = await pipeline.lifecycle.prepare({
      principal: reader,
      transport: 'websocket',
      params: { query: '{ a: test(correlationId: "theirs") { correlationId } b: tests(correlationIds: ["mine", "theirs"]) { correlationId messageCount } }' },
    });
    const result = await execute(prepared as ExecutionArgs);
    expect(result).toEqual({ data: { a: null, b: [{ correlationId: 'mine', messageCount: 0 }, null] } });
    // Each test read is checked once, as it is read (a streamed operation's loader keeps no reads,
    // so "theirs", asked twice, is read twice); the schema's resolvers never ask the policy.
    expect(seen.sort()).toEqual(['alice', 'bob', 'bob']);
    const sources = ['resolvers.ts', 'schema.ts'].map((file) => readFileSync(join(root, 'src', 'graphql', 'schema', file), 'utf8'));
    expect(sources.filter((source) => /\baccess\b|canSee\(principal/.test(source))).toEqual([]);
    await log.dispose();
  });

  it('refuses a mutation without the write scope with FORBIDDEN and a Bearer challenge naming the scope', () => {
    const refusal = admit('mutation { startTest { correlationId } }', 'http');
    expect(refusal?.message).toMatch(/tests:write/);
    expect((refusal as { extensions: Record<string, unknown> }).extensions).toMatchObject({ code: 'FORBIDDEN', http: { status: 403 } });
    const headers = (refusal as unknown as { extensions: { http: { headers: Map<string, string> } } }).extensions.http.headers;
    expect(headers.get('www-authenticate')).toMatch(/insufficient_scope.*tests:write/);
  });

  it('refuses a subscription over plain HTTP with BAD_USER_INPUT, and an operation it cannot identify with OPERATION_RESOLUTION_FAILURE', () => {
    const subscription = 'subscription { testChanges { correlationId } }';
    expect(admit(subscription, 'http')).toMatchObject({ code: 'BAD_USER_INPUT', message: expect.stringMatching(/WebSocket/) });
    expect(admit(subscription, 'sse')).toBeUndefined();
    expect(admit(subscription, 'websocket', 'Nope')).toMatchObject({ code: 'OPERATION_RESOLUTION_FAILURE' });
  });
});
