/**
 * One test, with its messages arriving live through the client library (use-follow.ts): the stored
 * ones first, then each new one, every message once across reconnects, listed in the test's order
 * by sequence. The header reads the test once, and again once the final message is in.
 */
import { useEffect } from 'react';
import { useQuery } from 'urql';
import type { FollowState, FollowedMessage } from '@result-collection-service/client';
import { ArrivalsChart } from './arrivals-chart.js';
import { OneTest } from './operations.js';
import { PayloadView } from './payload-view.js';
import { StatusBadge, messageCountText, testName } from './test-view.js';
import type { TokenKeeper } from './token-keeper.js';
import { useFollow } from './use-follow.js';

const TERMINAL = new Set(['COMPLETED', 'FAILED']);

/** The status the messages show: the final one's, else the latest reported, else none. */
function statusFrom(messages: readonly FollowedMessage[]): string | null {
  const final = messages.find((m) => m.final);
  if (final) return final.status ?? 'COMPLETED';
  const reported = [...messages].reverse().find((m) => m.status != null);
  return reported?.status ?? (messages.length > 0 ? 'RUNNING' : null);
}

/** What the stream's state adds to the facts line. */
function streamHint(state: FollowState): string | null {
  switch (state.status) {
    case 'live':
      return 'live';
    case 'catching-up':
      return `catching up (${state.behind} to come)`;
    case 'reconnecting':
    case 'connecting':
      return 'reconnecting…';
    case 'completed':
      return 'finished';
    default:
      return null;
  }
}

export function TestDetail(props: { correlationId: string; tokens: TokenKeeper }) {
  const variables = { id: props.correlationId };
  const [read, readAgain] = useQuery({ query: OneTest, variables });
  const { messages, state } = useFollow(props.correlationId, props.tokens);
  const finished = state.status === 'completed' || messages.some((m) => m.final);
  // The final message is in: read the test once more for its settled status and count.
  useEffect(() => {
    if (finished) readAgain({ requestPolicy: 'network-only' });
  }, [finished, readAgain]);

  const test = read.data?.test;
  if (read.data && test === null) return <p role="alert">No test has the correlation id {props.correlationId}.</p>;
  const status = test && TERMINAL.has(test.status) ? test.status : (statusFrom(messages) ?? test?.status ?? 'PENDING');
  const problem = read.error?.message ?? (state.status === 'failed' ? `The live stream stopped: ${state.message} (${state.code}).` : null);
  const hint = finished ? 'finished' : streamHint(state);
  return (
    <section className="rcs-detail" aria-label="Test">
      <h2>{(test && testName(test.input)) ?? props.correlationId}</h2>
      <p className="rcs-facts">
        <StatusBadge status={status} testId="detail-status" /> <span data-testid="detail-count">{messageCountText(messages.length)}</span>
        {hint ? (
          <span className="rcs-hint" data-testid="detail-stream">
            {' '}
            · {hint}
          </span>
        ) : null}
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
