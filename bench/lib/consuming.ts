/**
 * Waiting for a server to consume before producing to it. The service is ready to serve before its
 * consumer has joined its group (an API replica stays in rotation through rebalances), so `/readyz`
 * answering 200 is not enough: records produced meanwhile wait for the join, and the join would be
 * measured as latency (on the mock it put about 1 s into the p99 of every latency run).
 */
import { until } from './until.js';

/**
 * Resolves once `url`'s `/readyz` answers 200 and, for the service, names its consumer `ok`. The
 * ceilings and the peer answer 200 only once joined, with no such body. Throws after `timeoutMs`.
 */
export function untilConsuming(url: string, timeoutMs = 30_000): Promise<void> {
  return until(() => consuming(url), timeoutMs, `${url} to start consuming`);
}

async function consuming(url: string): Promise<boolean> {
  const response = await fetch(`${url}/readyz`);
  const text = await response.text();
  if (response.status !== 200) return false;
  const body = (text.startsWith('{') ? JSON.parse(text) : {}) as { checks?: Record<string, string> };
  return (body.checks?.consumer ?? 'ok') === 'ok';
}
