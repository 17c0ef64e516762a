/** Cleanup of the machine's shared Redis after tests that wrote under a prefix of their own. */
import { Redis } from 'ioredis';

/** Deletes every key of the shared Redis (REDIS_URL, else 127.0.0.1:6379) that matches `pattern`. */
export async function deleteRedisKeys(pattern: string): Promise<void> {
  const redis = new Redis(process.env.REDIS_URL ?? 'redis://127.0.0.1:6379');
  try {
    for await (const keys of redis.scanStream({ match: pattern }) as AsyncIterable<string[]>) if (keys.length) await redis.del(...keys);
  } finally {
    await redis.quit();
  }
}
