/**
 * One test's messages, live, through the client library (packages/client): the stored ones and then
 * each new one, every message once across reconnects (a lost network, a renewed token, a replica
 * gone), each placed in the test's order by sequence. The cursor store is the page's memory: the
 * page keeps the messages it shows for as long as it lives, and a reload starts both over together.
 */
import { useEffect, useState } from 'react';
import { follow, type FollowState, type FollowedMessage } from '@result-collection-service/client';
import { addMessage } from './merge.js';
import type { TokenKeeper } from './token-keeper.js';

/** A stream that brings nothing (no message, no keep-alive) for this long is reconnected. */
const DEAD_AFTER_MS = 20_000;

/** What the view shows of a followed test. */
export interface Followed {
  readonly messages: readonly FollowedMessage[];
  readonly state: FollowState;
}

/** Follows `correlationId` while the component is shown. */
export function useFollow(correlationId: string, tokens: TokenKeeper): Followed {
  const [messages, setMessages] = useState<readonly FollowedMessage[]>([]);
  const [state, setState] = useState<FollowState>({ status: 'connecting', attempt: 1 });
  useEffect(() => {
    setMessages([]);
    const following = follow(correlationId, {
      url: window.location.origin,
      transport: 'ws',
      getToken: () => tokens.accessToken(),
      deadAfterMs: DEAD_AFTER_MS,
      onMessage: (message) => setMessages((shown) => addMessage(shown, message)),
      onState: setState,
    });
    return () => void following.stop();
  }, [correlationId, tokens]);
  return { messages, state };
}
