import { randomUUID } from 'node:crypto';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { canonicalCorrelationId, isUuid } from '../../../src/domain/correlation-id.js';

describe('canonicalCorrelationId', () => {
  it('spells every case of a UUID one way, the way randomUUID does', () => {
    fc.assert(
      fc.property(fc.uuid(), fc.array(fc.boolean(), { minLength: 36, maxLength: 36 }), (uuid, flips) => {
        const spelled = [...uuid].map((c, i) => (flips[i] ? c.toUpperCase() : c)).join('');
        expect(canonicalCorrelationId(spelled)).toBe(uuid.toLowerCase());
      }),
      { numRuns: 200 },
    );
    const id = randomUUID();
    expect(canonicalCorrelationId(id)).toBe(id);
  });

  it('spells any string as the pattern of RFC 9562 decides: a UUID in any case lower-cased, anything else, near misses included, as it is', () => {
    const pattern = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;
    // A UUID with one character replaced (by anything, non-ASCII included), cut or grown, in either case.
    const nearMiss = fc
      .tuple(fc.uuid(), fc.nat(36), fc.string({ maxLength: 2, unit: 'binary' }), fc.constantFrom('lower', 'upper', 'mixed'))
      .map(([uuid, at, swap, spelling]) => {
        const spelled = spelling === 'lower' ? uuid : spelling === 'upper' ? uuid.toUpperCase() : uuid.replace(/[a-f]/, (c) => c.toUpperCase());
        return spelled.slice(0, at) + swap + spelled.slice(at + 1);
      });
    fc.assert(
      fc.property(fc.oneof(nearMiss, fc.string({ maxLength: 40, unit: 'binary' })), (id) => {
        expect(canonicalCorrelationId(id)).toBe(pattern.test(id) ? id.toLowerCase() : id);
        expect(isUuid(id)).toBe(pattern.test(id));
      }),
      { numRuns: 5000 },
    );
  });

  it('leaves any other id as it is', () => {
    for (const id of ['Build-42', 'constructor', '__proto__', `${randomUUID().toUpperCase()}x`, '']) expect(canonicalCorrelationId(id)).toBe(id);
    expect(isUuid('not-a-uuid')).toBe(false);
  });
});
