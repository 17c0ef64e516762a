/**
 * One test, with its messages arriving live. `testMessages` sends the stored messages first, then
 * each new one, with no gap and no duplicate, and completes after the final one; opening the test
 * again (a reload) starts it over from the stored ones. When the socket is replaced (a renewed
 * token, a lost connection) graphql-ws subscribes again and the replay repeats messages the view
 * already has: they are dropped by id (merge.ts). A stream cut before the final message is started
 * again the same way.
 */
import { useEffect } from 'react';
import { useQuery, useSubscription } from 'urql';
import type { TestMessagesSubscription } from './gql/graphql.js';
import { ArrivalsChart } from './arrivals-chart.js';
import { addMessage } from './merge.js';
import { OneTest, TestMessages } from './operations.js';
import { PayloadView } from './payload-view.js';
import { StatusBadge, messageCountText, testName } from './test-view.js';

type Message = TestMessagesSubscription['testMessages'];

const TERMINAL = new Set(['COMPLETED', 'FAILED']);
const RESUBSCRIBE_AFTER_MS = 1000;

/** The status the messages show: the final one's, else the latest reported, else none. */
function statusFrom(messages: readonly Message[]): string | null {
  const final = messages.find((m) => m.final);
  if (final) return final.status ?? 'COMPLETED';
  const reported = [...messages].reverse().find((m) => m.status != null);
  return reported?.status ?? (messages.length > 0 ? 'RUNNING' : null);
}

export function TestDetail(props: { correlationId: string }) {
  const variables = { id: props.correlationId };
  const [read, readAgain] = useQuery({ query: OneTest, variables });
  const [stream, subscribeAgain] = useSubscription({ query: TestMessages, variables }, (seen: readonly Message[] = [], event) =>
    addMessage(seen, event.testMessages),
  );
  const messages = stream.data ?? [];
  const finished = messages.some((m) => m.final);
  // A stream cut before the final message (its socket closed for good) starts over after a pause:
  // it replays what is stored, and what the view already has is dropped by id. A refusal (a
  // GraphQL error) is shown, not retried.
  useEffect(() => {
    if (stream.error?.networkError === undefined || finished) return;
    const timer = setTimeout(() => subscribeAgain(), RESUBSCRIBE_AFTER_MS);
    return () => clearTimeout(timer);
  }, [stream.error, finished, subscribeAgain]);
  // The final message is in: read the test once more for its settled status and count.
  useEffect(() => {
    if (finished) readAgain({ requestPolicy: 'network-only' });
  }, [finished, readAgain]);

  const test = read.data?.test;
  if (read.data && test === null) return <p role="alert">No test has the correlation id {props.correlationId}.</p>;
  const status = test && TERMINAL.has(test.status) ? test.status : (statusFrom(messages) ?? test?.status ?? 'PENDING');
  const problem = read.error?.message ?? stream.error?.message;
  return (
    <section className="rcs-detail" aria-label="Test">
      <h2>{(test && testName(test.input)) ?? props.correlationId}</h2>
      <p className="rcs-facts">
        <StatusBadge status={status} testId="detail-status" /> <span data-testid="detail-count">{messageCountText(messages.length)}</span>
        {finished ? <span className="rcs-hint"> · finished</span> : stream.fetching ? <span className="rcs-hint"> · live</span> : null}
        <br />
        <code data-testid="detail-id">{props.correlationId}</code>
      </p>
      {problem ? (
        <p role="alert" className="rcs-problem">
          {problem}
        </p>
      ) : null}
      <ArrivalsChart receivedAt={messages.map((m) => m.receivedAt)} />
      <table>
        <thead>
          <tr>
            <th>#</th>
            <th>Status</th>
            <th>Payload</th>
            <th>Received</th>
          </tr>
        </thead>
        <tbody>
          {messages.map((m) => (
            <tr key={m.id} data-testid="message" data-id={m.id} className={m.final ? 'rcs-final' : undefined}>
              <td>{m.sequence ?? '–'}</td>
              <td>{m.status ? <StatusBadge status={m.status} /> : null}</td>
              <td>
                <PayloadView payload={m.payload} />
              </td>
              <td>{new Date(m.receivedAt).toLocaleTimeString()}</td>
            </tr>
          ))}
        </tbody>
      </table>
    </section>
  );
}
