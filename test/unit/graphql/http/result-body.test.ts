/**
 * One serializer for every body Apollo Server sends, and a kept result serialized once: the
 * response cache asks for the body of an error-free result first, and Apollo's call for the same
 * result finds it made.
 */
import { describe, expect, it } from 'vitest';
import { dataBody, resultBody } from '../../../../src/graphql/http/result-body.js';

/** A `data` that counts how many times it was serialized. */
function counted(): { data: Record<string, unknown>; reads: () => number } {
  let reads = 0;
  const data = {
    get test() {
      reads += 1;
      return { status: 'COMPLETED' };
    },
  };
  return { data: data as Record<string, unknown>, reads: () => reads };
}

describe('result bodies', () => {
  it('serializes a result as Apollo Server does, with its trailing newline', () => {
    expect(resultBody({ data: { a: 1 } })).toBe('{"data":{"a":1}}\n');
    expect(resultBody({ errors: [{ message: 'no' }], data: null })).toBe('{"errors":[{"message":"no"}],"data":null}\n');
  });

  it('serializes a kept result once: the serializer finds the body the cache asked for', () => {
    const { data, reads } = counted();
    const kept = dataBody(data);
    expect(resultBody({ data })).toBe(kept);
    expect(dataBody(data)).toBe(kept);
    expect(reads()).toBe(1);
    expect(kept).toBe('{"data":{"test":{"status":"COMPLETED"}}}\n');
  });

  it('serializes again a result with errors or extensions beside the same data', () => {
    const { data, reads } = counted();
    dataBody(data);
    expect(resultBody({ data, extensions: { traced: true } })).toBe('{"data":{"test":{"status":"COMPLETED"}},"extensions":{"traced":true}}\n');
    expect(reads()).toBe(2);
  });
});
