/**
 * The type of a Redis connection of the service: one node (standalone, or the primary a Sentinel
 * names) or a Redis Cluster. Every part that keeps state in Redis (the result log, the rate limits,
 * the issuer's storage) takes its connections as this type; src/redis/redis-from-config.ts opens
 * them.
 */
import type { Cluster, Redis } from 'ioredis';

/** A connection of the service to Redis: one node, or a Redis Cluster. */
export type RedisClient = Redis | Cluster;
