/**
 * What a run says about followers that had not ended when it stopped waiting for them: for a few of
 * them, what the external system had acknowledged, what the follower was handed, and what the
 * service has stored (`GET /tests/{id}` through the load balancer). That tells a stalled ingest
 * (the store lacks results) from a stalled delivery (the store has them, the follower does not).
 */
import { mintToken } from '../test/support/tokens.js';
import type { History } from './history.js';

/** One line per stuck follower (at most `limit`), for the log and the report's notes. */
export async function describeStuckFollowers(history: History, ids: readonly string[], url: string, limit = 5): Promise<string[]> {
  const token = await mintToken({ sub: 'chaos' }, { expiresInSeconds: 600 });
  const lines: string[] = [];
  for (const id of ids.slice(0, limit)) {
    const acked = history.acked.get(id);
    const follower = history.followers.get(id);
    let stored: string;
    try {
      const response = await fetch(`${url}/tests/${encodeURIComponent(id)}`, {
        headers: { authorization: `Bearer ${token}` },
        signal: AbortSignal.timeout(10_000),
      });
      const body = (await response.json()) as { status?: string; messageCount?: number };
      stored = response.ok ? `${body.status ?? '?'} with ${body.messageCount ?? '?'} messages` : `answered ${response.status}`;
    } catch (error) {
      stored = `no answer (${(error as Error).message})`;
    }
    lines.push(
      `${id} (${follower?.transport ?? '?'}): ${acked === undefined ? 'request never read by the external system' : `${acked.sequences.size} results acknowledged${acked.final === undefined ? ', final not yet' : ''}`}; ` +
        `follower handed ${follower?.sequences.length ?? 0} after ${follower?.reconnects ?? 0} reconnects; service: ${stored}`,
    );
  }
  if (ids.length > limit) lines.push(`… and ${ids.length - limit} more`);
  return lines;
}
