/**
 * Waiting for a server to consume before producing to it. The service is ready to serve before its
 * consumer has joined its group (an API replica stays in rotation through rebalances), so `/readyz`
 * answering 200 is not enough: records produced meanwhile wait for the join, and the join would be
 * measured as latency (on the mock it put about 1 s into the p99 of every latency run).
 */
import { sleep } from './until.js';

/**
 * Resolves once `url`'s `/readyz` answers 200 and, for the service, names its consumer `ok`. The
 * ceilings and the peer answer 200 only once joined, with no such body. Throws after `timeoutMs`,
 * with the last answer `/readyz` gave (the consumer's state and why), so a run that fails says where
 * the join stood.
 */
export async function untilConsuming(url: string, timeoutMs = 30_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  let last: string;
  for (;;) {
    try {
      const response = await fetch(`${url}/readyz`);
      const text = await response.text();
      last = `${response.status} ${text.slice(0, 300)}`;
      if (consuming(response.status, text)) return;
    } catch (error) {
      last = String((error as Error).message ?? error);
    }
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${url} to start consuming; /readyz last said: ${last}`);
    await sleep(50);
  }
}

function consuming(status: number, text: string): boolean {
  if (status !== 200) return false;
  const body = (text.startsWith('{') ? JSON.parse(text) : {}) as { checks?: Record<string, string> };
  return (body.checks?.consumer ?? 'ok') === 'ok';
}
