/**
 * The client library's error codes come from the service's code union (src/base/errors.ts) by
 * generation (scripts/client-error-codes.ts): the committed file is what the generator writes today,
 * and each code is one the service maps to its wire forms.
 */
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { SERVICE_ERROR_CODES } from '@result-collection-service/client';
import { readErrorCodes, renderClientErrorCodes } from '../../scripts/client-error-codes.js';
import { closeCodeFor, httpStatusFor } from '../../src/base/errors.js';

const serverSource = readFileSync('src/base/errors.ts', 'utf8');

describe("the client library's error codes", () => {
  it("are the server's union, in its order, as the generator writes them today", async () => {
    const committed = readFileSync('packages/client/src/service-error-codes.ts', 'utf8');
    expect(committed).toBe(await renderClientErrorCodes(readErrorCodes(serverSource)));
    expect(SERVICE_ERROR_CODES).toEqual(readErrorCodes(serverSource).map((entry) => entry.code));
  });

  it('are each one the service maps to an HTTP status and a close code (its runtime table agrees with the union)', () => {
    for (const code of SERVICE_ERROR_CODES) {
      expect(httpStatusFor(code)).toBeGreaterThanOrEqual(400);
      expect(closeCodeFor(code)).toBeGreaterThanOrEqual(1000);
    }
  });

  it('carry the comments the union has, and the generator refuses a union it cannot read', async () => {
    const text = await renderClientErrorCodes(readErrorCodes(serverSource));
    expect(text).toContain('A cursor (`after`, `Last-Event-ID`) names a message its test no longer holds');
    expect(() => readErrorCodes("export type ErrorCode = 'A' | Other;")).toThrow(/not a string/);
    expect(() => readErrorCodes('export type Codes = string;')).toThrow(/declares no/);
  });
});
