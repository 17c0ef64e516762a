/**
 * Waiting for a server to consume before producing to it. The service is ready to serve before its
 * consumer has joined its group (an API replica stays in rotation through rebalances), so `/readyz`
 * answering 200 is not enough: records produced meanwhile wait for the join, and the join would be
 * measured as latency (on the mock it put about 1 s into the p99 of every latency run).
 */

/**
 * Resolves once `url`'s `/readyz` answers 200 and, for the service, names its consumer `ok`. The
 * ceilings and the peer answer 200 only once joined, with no such body. Throws after `timeoutMs`.
 */
export async function untilConsuming(url: string, timeoutMs = 30_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    if (await consuming(url).catch(() => false)) return;
    if (Date.now() > deadline) throw new Error(`${url} did not start consuming within ${timeoutMs} ms`);
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}

async function consuming(url: string): Promise<boolean> {
  const response = await fetch(`${url}/readyz`);
  const text = await response.text();
  if (response.status !== 200) return false;
  const body = (text.startsWith('{') ? JSON.parse(text) : {}) as { checks?: Record<string, string> };
  return (body.checks?.consumer ?? 'ok') === 'ok';
}
