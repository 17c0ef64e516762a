/** The `server.properties` of one KRaft node of the test cluster. */

/** `__consumer_offsets` partitions (fewer than Kafka's 50: the topic is created at the first group's join). */
export const OFFSETS_PARTITIONS = 10;

/** A listener besides PLAINTEXT and CONTROLLER, e.g. SASL_SSL with its own properties. */
export interface ListenerSpec {
  /** Listener name, also used as the key of its address (e.g. 'SASL_SSL'). */
  readonly name: string;
  readonly protocol: 'SSL' | 'SASL_SSL' | 'SASL_PLAINTEXT';
  /**
   * Properties for this listener, written as given: use the `listener.name.<name lower case>.`
   * prefix for per-listener settings (see Kafka's broker configuration).
   */
  readonly properties?: Readonly<Record<string, string>>;
}

/** Inputs of {@link nodeProperties}. */
export interface NodePropertiesInput {
  readonly id: number;
  readonly nodes: number;
  readonly dir: string;
  readonly addresses: Readonly<Record<string, string>>;
  readonly voters: string;
  readonly listeners: readonly ListenerSpec[];
  readonly overrides: Readonly<Record<string, string>>;
}

/**
 * Every node is broker and controller. The internal topics are replicated to every node, and a
 * three-node cluster requires two in-sync replicas, as production clusters are set up. Groups
 * start at once (no initial rebalance delay) so tests do not wait for members that never come.
 */
export function nodeProperties(input: NodePropertiesInput): string {
  const replication = String(input.nodes);
  const names = ['PLAINTEXT', 'CONTROLLER', ...input.listeners.map((l) => l.name)];
  const protocols = ['PLAINTEXT:PLAINTEXT', 'CONTROLLER:PLAINTEXT', ...input.listeners.map((l) => `${l.name}:${l.protocol}`)];
  const listen = names.map((name) => `${name}://${input.addresses[name]}`).join(',');
  const advertised = names
    .filter((n) => n !== 'CONTROLLER')
    .map((name) => `${name}://${input.addresses[name]}`)
    .join(',');
  const properties: Record<string, string> = {
    'process.roles': 'broker,controller',
    'node.id': String(input.id),
    'controller.quorum.voters': input.voters,
    listeners: listen,
    'advertised.listeners': advertised,
    'controller.listener.names': 'CONTROLLER',
    'inter.broker.listener.name': 'PLAINTEXT',
    'listener.security.protocol.map': protocols.join(','),
    'log.dirs': `${input.dir}/data`,
    'num.partitions': '1',
    'default.replication.factor': replication,
    'min.insync.replicas': input.nodes >= 3 ? '2' : '1',
    'offsets.topic.replication.factor': replication,
    'offsets.topic.num.partitions': String(OFFSETS_PARTITIONS),
    'transaction.state.log.replication.factor': replication,
    'transaction.state.log.min.isr': input.nodes >= 3 ? '2' : '1',
    'share.coordinator.state.topic.replication.factor': replication,
    'share.coordinator.state.topic.min.isr': input.nodes >= 3 ? '2' : '1',
    'group.initial.rebalance.delay.ms': '0',
    'auto.create.topics.enable': 'false',
    // Smaller segments than the 1 GiB default: test folders stay small.
    'log.segment.bytes': String(64 * 1024 * 1024),
    'num.network.threads': '2',
    'num.io.threads': '4',
  };
  for (const listener of input.listeners) Object.assign(properties, listener.properties ?? {});
  Object.assign(properties, input.overrides);
  return `${Object.entries(properties)
    .map(([key, value]) => `${key}=${value}`)
    .join('\n')}\n`;
}

/** The `__consumer_offsets` partition of a group, as Kafka computes it (`Utils.abs(groupId.hashCode()) % n`). */
export function offsetsPartition(groupId: string, partitions: number): number {
  let hash = 0;
  for (let i = 0; i < groupId.length; i++) hash = (Math.imul(31, hash) + groupId.charCodeAt(i)) | 0;
  // Kafka's Utils.abs maps Integer.MIN_VALUE to 0 and is Math.abs otherwise.
  return (hash === -2147483648 ? 0 : Math.abs(hash)) % partitions;
}
