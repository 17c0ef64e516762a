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

  it('leaves any other id as it is', () => {
    for (const id of ['Build-42', 'constructor', '__proto__', `${randomUUID().toUpperCase()}x`, '']) expect(canonicalCorrelationId(id)).toBe(id);
    expect(isUuid('not-a-uuid')).toBe(false);
  });
});
