/**
 * A push answered by its plan is the result graphql-js's `execute` gives, byte for byte and object
 * for object; the plan answers every push graphql-js answers without an error (unless the operation
 * has directives), and none that graphql-js answers with one.
 */
import fc from 'fast-check';
import { execute, isObjectType, parse, type ExecutionArgs, type ExecutionResult } from 'graphql';
import { describe, expect, it, vi } from 'vitest';
import { executeEvent, plainResult } from '../../../../src/graphql/fanout/plain-execution.js';
import { sharedResult } from '../../../../src/graphql/fanout/shared-results.js';
import { compactMessage } from '../../../../src/log/compact-message.js';
import { createSchema } from '../../../../src/graphql/schema/schema.js';

const MESSAGE_FIELDS = [
  'id',
  'correlationId',
  'messageId',
  'sequence',
  'status',
  'final',
  'payload',
  'producedAt',
  'receivedAt',
  'cursor',
  '__typename',
  'delivery { live catchingUp behind }',
];

/** A selection of a message's fields: some aliased, some inside an inline fragment or a named one, some repeated. */
const selection = fc.record({
  fields: fc.array(
    fc.record({
      field: fc.constantFrom(...MESSAGE_FIELDS),
      alias: fc.option(fc.constantFrom('a', 'b', 'c'), { nil: undefined }),
      wrap: fc.constantFrom('none', 'inline', 'named'),
    }),
    { minLength: 1, maxLength: 8 },
  ),
  directive: fc.constantFrom('', '', '', ' @include(if: true)', ' @skip(if: false)'),
});

function documentOf(chosen: { fields: Array<{ field: string; alias: string | undefined; wrap: string }>; directive: string }): string {
  const fragments: string[] = [];
  const parts = chosen.fields.map(({ field, alias, wrap }, i) => {
    // An alias is given to its field alone (two fields under one alias must be the same field to be valid).
    const text = alias === undefined ? field : `${alias}${i}: ${field}`;
    if (wrap === 'inline') return `... on TestMessage { ${text} }`;
    if (wrap === 'named') {
      fragments.push(`fragment F${i} on TestMessage { ${text} }`);
      return `...F${i}`;
    }
    return text;
  });
  const directed = chosen.directive === '' ? '' : `__typename${chosen.directive}`;
  return `subscription($id: ID!) { testMessages(correlationId: $id) { ${parts.join(' ')} ${directed} } } ${fragments.join(' ')}`;
}

/** A stored message, sometimes with a value a field's type refuses (which graphql-js answers with an error). */
const message = fc.record({
  correlationId: fc.constantFrom('t-1', 'c0ffee00-0000-4000-8000-000000000001'),
  key: fc.constantFrom('s:1', 'm:abc', 'o:results/0/17'),
  messageId: fc.option(fc.string({ maxLength: 8 }), { nil: null }),
  sequence: fc.oneof(fc.integer({ min: -1000, max: 1_000_000 }), fc.constant(null), fc.constant(2 ** 40), fc.constant(1.5)),
  status: fc.constantFrom('PENDING', 'RUNNING', 'COMPLETED', 'FAILED', null, 'BOGUS'),
  final: fc.oneof(fc.boolean(), fc.boolean(), fc.constant(null)),
  payload: fc.jsonValue({ maxDepth: 3 }),
  producedAt: fc.oneof(fc.constant(null), fc.integer({ min: 0, max: 4_102_444_800_000 }), fc.constant(Number.NaN)),
  receivedAt: fc.oneof(fc.integer({ min: 0, max: 4_102_444_800_000 }), fc.integer({ min: 0, max: 4_102_444_800_000 }), fc.constant(Number.NaN)),
  arrival: fc.integer({ min: 1, max: 1_000_000 }),
});

/** One well-formed stored message, for the cases below the property. */
const event = {
  correlationId: 't-1',
  key: 's:1',
  messageId: null,
  sequence: 4,
  status: null,
  final: false,
  payload: 1,
  producedAt: null,
  receivedAt: 0,
  arrival: 1,
};

function executed(args: ExecutionArgs, event: unknown): ExecutionResult {
  const result = execute({ ...args, rootValue: event });
  if (result instanceof Promise) throw new Error('a push executed asynchronously');
  return result;
}

describe('a push answered by its plan', () => {
  for (const federation of [false, true]) {
    const schema = createSchema({ federation });

    it(`is graphql-js's result whenever graphql-js has no error, and gives way whenever it has one (${federation ? 'subgraph' : 'plain'} schema)`, () => {
      let planned = 0;
      fc.assert(
        fc.property(selection, message, (chosen, event) => {
          const args: ExecutionArgs = { schema, document: parse(documentOf(chosen)), variableValues: { id: event.correlationId } };
          const plain = plainResult(args, event);
          const full = executed(args, event);
          if (plain === undefined) {
            // Only an operation with a directive, or an event graphql-js answers with an error, is left to graphql-js.
            expect(chosen.directive !== '' || full.errors !== undefined).toBe(true);
            return;
          }
          planned++;
          expect(full.errors).toBeUndefined();
          expect(JSON.stringify(plain)).toBe(JSON.stringify(full));
          expect(Object.getPrototypeOf(plain.data)).toBe(Object.getPrototypeOf(full.data));
          const inner = (plain.data as Record<string, unknown>).testMessages;
          expect(Object.getPrototypeOf(inner)).toBe(Object.getPrototypeOf((full.data as Record<string, unknown>).testMessages));
        }),
        { numRuns: 400 },
      );
      // The property is not met by a plan that never answers.
      expect(planned).toBeGreaterThan(100);
    });
  }

  it('answers a change with the test fields read from it, and leaves to graphql-js a selection whose resolver reads the store', () => {
    const schema = createSchema();
    const change = { kind: 'UPDATED', test: { correlationId: 't-1', status: 'RUNNING', messageCount: 3, createdAt: 0, updatedAt: 5, input: null } };
    const plainOnly: ExecutionArgs = { schema, document: parse('subscription { testChanges { kind test { correlationId status messageCount updatedAt } } }') };
    const plain = plainResult(plainOnly, change);
    expect(JSON.stringify(plain)).toBe(JSON.stringify(executed(plainOnly, change)));
    expect(plain).toBeDefined();
    const readsTheStore: ExecutionArgs = { schema, document: parse('subscription { testChanges { kind test { messages { totalCount } } } }') };
    expect(plainResult(readsTheStore, change)).toBeUndefined();
    const readsTheInput: ExecutionArgs = { schema, document: parse('subscription { testChanges { test { input } } }') };
    expect(plainResult(readsTheInput, change)).toBeUndefined();
  });

  it('is made for the operation named, and none for a query or a field resolver of the caller', () => {
    const schema = createSchema();
    const document = parse(
      'subscription A { testMessages(correlationId: "t-1") { sequence } } subscription B { testMessages(correlationId: "t-1") { final } }',
    );
    expect(JSON.stringify(plainResult({ schema, document, operationName: 'B' }, event))).toBe('{"data":{"testMessages":{"final":false}}}');
    expect(JSON.stringify(plainResult({ schema, document, operationName: 'A' }, event))).toBe('{"data":{"testMessages":{"sequence":4}}}');
    expect(plainResult({ schema, document: parse('{ test(correlationId: "t-1") { status } }') }, event)).toBeUndefined();
    expect(
      plainResult({ schema, document: parse('subscription { testMessages(correlationId: "t-1") { sequence } }'), fieldResolver: () => 1 }, event),
    ).toBeUndefined();
  });

  it('gives way where graphql-js would see something else: a resolver wrapped after the plan, a getter that throws, a field resolver or another operation name on a planned document', () => {
    const schema = createSchema();
    const args: ExecutionArgs = { schema, document: parse('subscription { testMessages(correlationId: "t-1") { id sequence } }') };
    expect(JSON.stringify(plainResult(args, event))).toBe('{"data":{"testMessages":{"id":"t-1/s:1","sequence":4}}}');
    // As OpenTelemetry's graphql instrumentation does to trace a resolver: replaced in place.
    const type = schema.getType('TestMessage');
    if (!isObjectType(type)) throw new Error('no TestMessage');
    const field = type.getFields().id;
    if (field?.resolve === undefined) throw new Error('TestMessage.id has no resolver');
    const original = field.resolve;
    field.resolve = (...call: Parameters<typeof original>) => `traced ${String(original(...call))}`;
    expect(plainResult(args, event)).toBeUndefined();
    expect(JSON.stringify(executed(args, event))).toBe('{"data":{"testMessages":{"id":"traced t-1/s:1","sequence":4}}}');
    field.resolve = original;

    const throwing = Object.defineProperty({ ...event }, 'sequence', {
      get() {
        throw new Error('unreadable');
      },
    });
    expect(plainResult(args, throwing)).toBeUndefined();
    expect(executed(args, throwing).errors?.[0]?.message).toBe('unreadable');

    expect(plainResult({ ...args, fieldResolver: () => 99 }, event)).toBeUndefined();
    expect(plainResult({ ...args, operationName: '' }, event)).toBeUndefined();
    expect(plainResult(args, event)).toBeDefined();
  });
});

describe("a stored payload's text on a push", () => {
  const schema = createSchema();
  const stored = (payload: unknown) =>
    compactMessage(
      { correlationId: 't-1', key: 's:4', messageId: null, sequence: 4, status: 'RUNNING', final: false, payload, producedAt: null },
      1_000,
      { correlationId: 't-1', base: 0 },
      1,
    );
  const args = (selection: string): ExecutionArgs => ({ schema, document: parse(`subscription { testMessages(correlationId: "t-1") { ${selection} } }`) });

  it("is copied into the push's bytes as stored, the same bytes graphql-js's result serializes to, whatever the payload", () => {
    fc.assert(
      fc.property(
        fc.jsonValue({ maxDepth: 4 }),
        fc.constantFrom('payload', 'sequence payload', 'p: payload status', 'payload q: payload'),
        (payload, selection) => {
          const message = stored(payload);
          const shared = sharedResult(message, executeEvent(args(selection), message) as ExecutionResult);
          expect(shared.bytes().toString()).toBe(JSON.stringify(executed(args(selection), message)));
          // A result serialized another way (an error's path, a transport of its own) still reads the value.
          expect(JSON.stringify(shared.result)).toBe(JSON.stringify(executed(args(selection), message)));
        },
      ),
      { numRuns: 300 },
    );
  });

  it('is not parsed on a push, whether its plan or graphql-js answers it', () => {
    const message = stored({ note: 'x'.repeat(200), list: [1, 2, 3] });
    const expected = `{"data":{"testMessages":{"sequence":4,"payload":{"note":"${'x'.repeat(200)}","list":[1,2,3]}}}}`;
    const parses = vi.spyOn(JSON, 'parse');
    try {
      expect(
        sharedResult(message, executeEvent(args('sequence payload'), message) as ExecutionResult)
          .bytes()
          .toString(),
      ).toBe(expected);
      // With a directive the plan gives way, and graphql-js calls the payload's resolver.
      const directed = args('sequence payload @include(if: true)');
      expect(plainResult(directed, message)).toBeUndefined();
      expect(
        sharedResult(message, executeEvent(directed, message) as ExecutionResult)
          .bytes()
          .toString(),
      ).toBe(expected);
      expect(parses).not.toHaveBeenCalled();
    } finally {
      parses.mockRestore();
    }
  });
});
