/**
 * The signed-in user's tests, each with its status and message count kept live: the
 * `recentTests` query gives the starting list, the `testChanges` subscription every creation and
 * change after it, and the two are merged per test, the newer state winning (merge.ts). The
 * subscription replays nothing, so after the live connection comes back the query is read again
 * for whatever changed while it was away.
 */
import { useEffect } from 'react';
import { useQuery, useSubscription } from 'urql';
import type { TestFieldsFragment } from './gql/graphql.js';
import { mergeTests, upsertTest } from './merge.js';
import { RecentTests, TestChanges } from './operations.js';
import { StatusBadge, messageCountText, testName } from './test-view.js';

/** How many of the newest tests the list shows. */
const LIST_SIZE = 50;

export function TestList(props: { reconnects: number; openTest: string | null; onOpen: (id: string) => void }) {
  const [recent, readAgain] = useQuery({ query: RecentTests, variables: { first: LIST_SIZE } });
  const [changes] = useSubscription({ query: TestChanges }, (seen: readonly TestFieldsFragment[] = [], event) => upsertTest(seen, event.testChanges.test));
  useEffect(() => {
    if (props.reconnects > 0) readAgain({ requestPolicy: 'network-only' });
  }, [props.reconnects, readAgain]);

  const tests = mergeTests(recent.data?.recentTests.nodes ?? [], changes.data ?? []).slice(0, LIST_SIZE);
  const problem = recent.error?.message ?? changes.error?.message;
  return (
    <section className="rcs-list" aria-label="Your tests">
      <h2>Your tests</h2>
      {problem ? (
        <p role="alert" className="rcs-problem" data-testid="list-problem">
          {problem}
        </p>
      ) : null}
      {tests.length === 0 && !recent.fetching && !problem ? <p className="rcs-hint">No tests yet.</p> : null}
      <ul>
        {tests.map((test) => (
          <li
            key={test.correlationId}
            data-testid="test-row"
            data-correlation-id={test.correlationId}
            data-status={test.status}
            className={`rcs-row-${test.status.toLowerCase()}`}
            aria-current={test.correlationId === props.openTest ? 'true' : undefined}
          >
            <button type="button" onClick={() => props.onOpen(test.correlationId)}>
              <span className="rcs-name">{testName(test.input) ?? test.correlationId}</span>
              <StatusBadge status={test.status} testId="row-status" />
              <span className="rcs-count" data-testid="row-count">
                {messageCountText(test.messageCount)}
              </span>
            </button>
          </li>
        ))}
      </ul>
    </section>
  );
}
