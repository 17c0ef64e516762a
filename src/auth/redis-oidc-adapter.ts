/**
 * oidc-provider's storage in Redis, so sessions, grants, authorization codes and refresh tokens
 * survive a restart and every replica honours them. After oidc-provider's example Redis adapter:
 *
 *   <prefix><Model>:<id>           hash: `payload` (JSON) and, once used, `consumed` (epoch seconds)
 *   <prefix>grant:<grantId>        set of the keys issued under one grant, to revoke them together
 *   <prefix>sessionUid:<uid>       the id of the session with that uid
 *   <prefix>userCode:<userCode>    the id of the device code with that user code
 *
 * Every key expires with what it holds. Consuming is atomic: of two replicas presenting the same
 * refresh token (or code) at once, one wins and the other is treated as a replay, which revokes
 * the whole grant, as oidc-provider does for a replay it sees itself.
 */
import type { RedisClient } from '../redis/redis-client.js';
import { RECONNECT_WAIT_MS, whenReady } from '../redis/redis-ready.js';
import type { Adapter, AdapterFactory, AdapterPayload } from 'oidc-provider';
import { errors } from './oidc-provider.js';

/** Models whose entries belong to a grant and are revoked with it. */
const GRANTABLE = new Set(['AccessToken', 'AuthorizationCode', 'RefreshToken', 'DeviceCode', 'BackchannelAuthenticationRequest', 'PreAuthorizedCode']);

/** Marks an entry consumed unless it already is (0) or is gone (-1); 1 when this call consumed it. */
const CONSUME_SCRIPT = `
if redis.call('EXISTS', KEYS[1]) == 0 then return -1 end
return redis.call('HSETNX', KEYS[1], 'consumed', ARGV[1])`;

/** Options of {@link createRedisOidcAdapter}. */
export interface RedisOidcAdapterOptions {
  /** A connection of its own or shared; closed by whoever created it. */
  readonly redis: RedisClient;
  /**
   * Prepended to every key, e.g. `rcs:oidc:`; on Redis Cluster with a hash tag (`rcs:{oidc}:`),
   * since one MULTI writes several of them.
   */
  readonly prefix: string;
}

/** The adapter factory to hand to oidc-provider's `adapter` setting. */
export function createRedisOidcAdapter(options: RedisOidcAdapterOptions): AdapterFactory {
  const { redis, prefix } = options;
  const grantKey = (grantId: string) => `${prefix}grant:${grantId}`;
  const uidKey = (uid: string) => `${prefix}sessionUid:${uid}`;
  const userCodeKey = (userCode: string) => `${prefix}userCode:${userCode}`;

  const revokeByGrantId = async (grantId: string): Promise<void> => {
    const keys = await redis.smembers(grantKey(grantId));
    await redis.del(...keys, grantKey(grantId));
  };

  // An arrow function: oidc-provider calls a constructable adapter with `new`.
  return (model: string): Adapter => onceReady(redis, modelAdapter(model));

  function modelAdapter(model: string): Adapter {
    const key = (id: string) => `${prefix}${model}:${id}`;

    const find = async (id: string | null): Promise<AdapterPayload | undefined> => {
      if (id === null) return undefined;
      const stored = await redis.hgetall(key(id));
      if (stored.payload === undefined) return undefined;
      const payload = JSON.parse(stored.payload) as AdapterPayload;
      return stored.consumed === undefined ? payload : { ...payload, consumed: Number(stored.consumed) };
    };

    return {
      async upsert(id, payload, expiresIn) {
        const k = key(id);
        const ttl = typeof expiresIn === 'number' && expiresIn > 0 ? expiresIn : undefined;
        const multi = redis.multi().del(k).hset(k, 'payload', JSON.stringify(payload));
        if (ttl !== undefined) multi.expire(k, ttl);
        if (GRANTABLE.has(model) && typeof payload.grantId === 'string') {
          const g = grantKey(payload.grantId);
          multi.sadd(g, k);
          // The set lives as long as its longest-lived member.
          if (ttl !== undefined && ttl > (await redis.ttl(g))) multi.expire(g, ttl);
        }
        if (model === 'Session' && typeof payload.uid === 'string') {
          multi.set(uidKey(payload.uid), id);
          if (ttl !== undefined) multi.expire(uidKey(payload.uid), ttl);
        }
        if (typeof payload.userCode === 'string') {
          multi.set(userCodeKey(payload.userCode), id);
          if (ttl !== undefined) multi.expire(userCodeKey(payload.userCode), ttl);
        }
        await execOrThrow(multi);
      },

      find,
      findByUid: async (uid) => find(await redis.get(uidKey(uid))),
      findByUserCode: async (userCode) => find(await redis.get(userCodeKey(userCode))),

      async consume(id) {
        const outcome = (await redis.eval(CONSUME_SCRIPT, 1, key(id), Math.floor(Date.now() / 1000))) as number;
        if (outcome === 1) return;
        // Gone: revoked with its grant already.
        const payload = outcome === 0 ? await find(id) : undefined;
        // Consumed (or revoked) between oidc-provider's find and this call: a replay that raced the
        // first use. The whole grant goes, the grant itself too, so that a token the winner is
        // saving under it right now is refused as well.
        if (typeof payload?.grantId === 'string') {
          await revokeByGrantId(payload.grantId);
          await redis.del(`${prefix}Grant:${payload.grantId}`);
        }
        throw new errors.InvalidGrant(`${model === 'RefreshToken' ? 'refresh token' : 'grant'} already used`);
      },

      async destroy(id) {
        await redis.del(key(id));
      },

      revokeByGrantId,
    };
  }
}

/** The adapter with every call waiting for the connection first (a bounded wait: see RECONNECT_WAIT_MS). */
function onceReady(redis: RedisClient, adapter: Adapter): Adapter {
  const waiting =
    <A extends unknown[], R>(call: (...args: A) => Promise<R>) =>
    async (...args: A): Promise<R> => {
      await whenReady(redis, RECONNECT_WAIT_MS);
      return call(...args);
    };
  return {
    upsert: waiting(adapter.upsert.bind(adapter)),
    find: waiting(adapter.find.bind(adapter)),
    findByUid: waiting(adapter.findByUid.bind(adapter)),
    findByUserCode: waiting(adapter.findByUserCode.bind(adapter)),
    consume: waiting(adapter.consume.bind(adapter)),
    destroy: waiting(adapter.destroy.bind(adapter)),
    revokeByGrantId: waiting(adapter.revokeByGrantId.bind(adapter)),
  };
}

/** Runs a MULTI and rejects if any of its commands failed (ioredis reports them per command). */
async function execOrThrow(multi: ReturnType<RedisClient['multi']>): Promise<void> {
  const results = await multi.exec();
  const failed = results?.find(([error]) => error !== null);
  if (failed?.[0]) throw failed[0];
}
