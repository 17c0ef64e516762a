/** `cluster-key-slot` (the slot function ioredis itself uses) ships no types of its own. */
declare module 'cluster-key-slot' {
  /** The Redis Cluster slot (0..16383) of `key`, honouring its `{hash tag}`. */
  function calculateSlot(key: string | Buffer): number;
  export default calculateSlot;
}
