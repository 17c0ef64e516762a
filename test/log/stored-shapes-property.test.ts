/**
 * Whatever input a start accepts is served back as it was sent: arbitrary JSON (prototype names as
 * keys, unicode, odd numbers, nesting up to the shape limits) started over `POST /tests` and
 * `startTest`, then read with `GET /tests/{id}`, `test { input }` and the owner's `recentTests`,
 * on the memory and the Redis store. An input past the limits is refused with its code, never stored.
 */
import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { postGraphQL } from '../support/graphql.js';
import { useRedisLogs } from '../support/redis-logs.js';
import { startPipelineService, type TestService } from '../support/service.js';
import { defaultToken } from '../support/tokens.js';

const redisLogs = useRedisLogs('rcs-shapes-property');
/** Arrays and objects nest at most 1 + 4 + 5 deep here: under the limit set below. */
const DEPTH = 12;
const key = fc.oneof(fc.constantFrom('__proto__', 'constructor', 'toString', 'hasOwnProperty'), fc.string({ unit: 'grapheme', maxLength: 8 }));
const json = fc.jsonValue({ maxDepth: 4 });
const parameters = fc.letrec((tie) => ({
  value: fc.oneof({ maxDepth: 4, withCrossShrink: true }, json, fc.array(tie('value'), { maxLength: 3 }), fc.dictionary(key, tie('value'), { maxKeys: 3 })),
})).value;
const nested = (depth: number) => '['.repeat(depth) + ']'.repeat(depth);
const READ = `query($id: ID!) { test(correlationId: $id) { input } }`;

const stores = [
  ['memory', () => ({})],
  ['redis', () => ({ log: redisLogs.createLog() })],
] as const;

describe.each(stores)('inputs round-trip on the %s store', (_label, extra) => {
  let svc: TestService;
  let token: string;
  beforeAll(async () => {
    svc = await startPipelineService({ ...extra(), env: { JSON_MAX_DEPTH: String(DEPTH + 1) } });
    await svc.ready();
    token = await defaultToken();
  }, 60_000);
  afterAll(() => svc?.stop());

  it('serves back every accepted input on every read, and refuses one past the depth with INPUT_TOO_DEEP', async () => {
    await fc.assert(
      fc.asyncProperty(parameters, fc.boolean(), async (value, overRest) => {
        const input = { name: 'property', parameters: value };
        const expected = JSON.parse(JSON.stringify(input)) as unknown;
        const started = overRest
          ? ((await (
              await fetch(`${svc.url}/tests`, {
                method: 'POST',
                headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
                body: JSON.stringify(input),
              })
            ).json()) as { correlationId: string })
          : ((await postGraphQL(svc.url, `mutation($i: StartTestInput) { startTest(input: $i) { correlationId } }`, { i: input }, { token })).body.data
              ?.startTest as { correlationId: string });
        const id = started.correlationId;
        const rest = (await (await fetch(`${svc.url}/tests/${id}`, { headers: { authorization: `Bearer ${token}` } })).json()) as { input: unknown };
        expect(rest.input).toEqual(expected);
        const read = await postGraphQL(svc.url, READ, { id }, { token });
        expect(read.body.data?.test.input).toEqual(expected);
        const list = await postGraphQL(svc.url, `query { recentTests(first: 1) { nodes { correlationId input } } }`, undefined, { token });
        expect(list.body.errors).toBeUndefined();
        expect(list.body.data?.recentTests.nodes[0]).toEqual({ correlationId: id, input: expected });
      }),
      { numRuns: 25 },
    );
    const deep = await fetch(`${svc.url}/tests`, {
      method: 'POST',
      headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
      body: `{"name":"deep","parameters":${nested(DEPTH + 1)}}`,
    });
    expect(deep.status).toBe(413);
    expect(await deep.json()).toMatchObject({ code: 'INPUT_TOO_DEEP' });
  }, 120_000);
});
