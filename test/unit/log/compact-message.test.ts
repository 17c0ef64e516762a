import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { compactMessage, keyKind } from '../../../src/log/compact-message.js';
import type { IncomingMessage } from '../../../src/domain/types.js';

const incoming = (fields: Partial<IncomingMessage> & Pick<IncomingMessage, 'key'>): IncomingMessage => ({
  correlationId: 'c',
  messageId: null,
  sequence: null,
  status: null,
  final: false,
  payload: { n: 1 },
  producedAt: null,
  ...fields,
});

describe('the compact form of a stored message', () => {
  it('derives a sequence key only when the key is exactly s:<sequence>', () => {
    // Keys that name the same number in another spelling must be kept as they are, or a read
    // would rebuild another key than the one stored (and deduplicated on).
    for (const key of ['s:07', 's:00', 's:+7', 's:7.0', 's:', 's:7 ', 'S:7', 'x:7']) {
      expect(keyKind(incoming({ key, sequence: 7 })), key).toBe('other');
    }
    expect(keyKind(incoming({ key: 's:0', sequence: 0 }))).toBe('sequence');
    fc.assert(
      fc.property(fc.nat(), fc.string(), (sequence, tail) => {
        const exact = `s:${sequence}`;
        expect(keyKind(incoming({ key: exact, sequence }))).toBe('sequence');
        const other = `s:${sequence}${tail}`;
        expect(keyKind(incoming({ key: other, sequence }))).toBe(other === exact ? 'sequence' : 'other');
      }),
    );
  });

  it('reads back every field it was built from, the key included', () => {
    fc.assert(
      fc.property(
        fc.record({
          messageId: fc.option(fc.string({ minLength: 1 })),
          sequence: fc.option(fc.nat()),
          own: fc.string(),
          status: fc.constantFrom(null, 'PENDING', 'RUNNING', 'COMPLETED', 'FAILED' as const),
          final: fc.boolean(),
          producedAt: fc.option(fc.integer({ min: 0, max: 2_000_000_000_000 })),
          arrival: fc.integer({ min: 1, max: 2 ** 30 }),
        }),
        ({ messageId, sequence, own, status, final, producedAt, arrival }) => {
          const key = messageId !== null ? `m:${messageId}` : sequence !== null ? `s:${sequence}` : `o:${own}`;
          const message = compactMessage(incoming({ key, messageId, sequence, status, final, producedAt }), 1_000, { correlationId: 'c', base: 500 }, arrival);
          expect(message).toMatchObject({
            correlationId: 'c',
            key,
            messageId,
            sequence,
            status,
            final,
            producedAt,
            receivedAt: 1_000,
            arrival,
            payload: { n: 1 },
          });
          expect(JSON.parse(JSON.stringify(message))).toMatchObject({ key, payload: { n: 1 } });
        },
      ),
    );
  });
});
