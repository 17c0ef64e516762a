/** The end of a follower whose test left the store (TEST_EXPIRED), and why it left. */
import { ServiceError } from '../base/errors.js';

/** Why a test left the store while followed: its TTL, room for newer tests, or its start failed (`ResultLog.remove`). */
export type GoneReason = 'expired' | 'evicted' | 'removed';

/** The end of a follower whose test left the store (see TEST_EXPIRED). */
export function testExpired(correlationId: string, reason: GoneReason): ServiceError {
  const why = {
    expired: 'expired (no message for as long as tests are kept)',
    evicted: 'was evicted to make room for newer tests',
    removed: 'was removed (its start could not be sent)',
  }[reason];
  return new ServiceError('TEST_EXPIRED', `The test "${correlationId}" ${why}: nothing more will come for it.`, { details: { reason } });
}
