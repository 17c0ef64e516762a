/**
 * Reading a Redis Cluster's state from its nodes: `CLUSTER NODES` parsed, the checks behind
 * "healthy" and "rejoined", and which node serves a slot.
 */
import type { ManagedNode } from './redis-node.js';
import { infoFields } from './redis-process.js';

const SLOTS = 16384;

/** One line of `CLUSTER NODES`. */
export interface ClusterEntry {
  readonly id: string;
  readonly port: number;
  readonly flags: ReadonlySet<string>;
  readonly role: 'master' | 'slave';
  /** The id of its master ('-' for a master). */
  readonly masterId: string;
  /** The config epoch of the node (of its master, for a replica): the newer claim on a slot wins. */
  readonly epoch: number;
  /** Slot ranges it serves, inclusive. */
  readonly slots: ReadonlyArray<readonly [number, number]>;
}

/** Parses `CLUSTER NODES` (`id ip:port@cport flags master ping pong epoch link slot...`). */
export function parseClusterNodes(text: unknown): ClusterEntry[] {
  return String(text)
    .split('\n')
    .filter((line) => line.trim() !== '')
    .map((line) => {
      const [id = '', address = '', flagList = '', masterId = '-', , , epoch = '0', , ...slotFields] = line.trim().split(' ');
      const flags = new Set(flagList.split(','));
      const port = Number(/:(\d+)@/.exec(address)?.[1] ?? NaN);
      // "[slot->-id]" / "[slot-<-id]" are slots being migrated, not served.
      const slots = slotFields
        .filter((s) => !s.startsWith('['))
        .map((s) => {
          const [from, to = from] = s.split('-');
          return [Number(from), Number(to)] as const;
        });
      return { id, port, flags, role: flags.has('master') ? 'master' : 'slave', masterId, epoch: Number(epoch), slots } as const;
    });
}

/** Whether an entry is flagged as unreachable or not yet part of the cluster. */
export function troubled(entry: ClusterEntry): boolean {
  return ['fail', 'fail?', 'handshake', 'noaddr'].some((f) => entry.flags.has(f));
}

/** The part of a node's view every node must agree on: who is master of what, who replicates whom. */
function normalized(entries: readonly ClusterEntry[]): string {
  return entries
    .map((e) => `${e.id} ${e.role} ${e.role === 'slave' ? e.masterId : '-'} ${e.slots.map(([a, b]) => `${a}-${b}`).join(',')}`)
    .sort()
    .join('\n');
}

/** The views of the live nodes, by port. */
export async function liveViews(nodes: readonly ManagedNode[]): Promise<Map<number, ClusterEntry[]>> {
  const views = new Map<number, ClusterEntry[]>();
  for (const node of nodes.filter((n) => n.live)) views.set(node.port, parseClusterNodes(await node.call('CLUSTER', 'NODES')));
  return views;
}

/** Whether every given view is the same (ignoring flags such as `myself` and link states). */
export function agree(views: ReadonlyMap<number, readonly ClusterEntry[]>): boolean {
  return new Set([...views.values()].map(normalized)).size <= 1;
}

/** Whether a node says the cluster is up and every slot is served. */
async function clusterOk(node: ManagedNode): Promise<boolean> {
  const info = infoFields(await node.call('CLUSTER', 'INFO'));
  return info.get('cluster_state') === 'ok' && info.get('cluster_slots_ok') === String(SLOTS);
}

/** Whether a replica's replication link to its master is up. */
async function linkUp(node: ManagedNode): Promise<boolean> {
  const info = infoFields(await node.call('INFO', 'replication'));
  return info.get('role') === 'master' || info.get('master_link_status') === 'up';
}

/**
 * Healthy: every node runs and answers; each says cluster_state:ok with all 16384 slots served; all
 * views agree and flag nobody; `primaries` masters serve slots, each with `replicas` replicas whose
 * replication links are up.
 */
export async function clusterHealthy(nodes: readonly ManagedNode[], primaries: number, replicas: number): Promise<boolean> {
  if (nodes.some((n) => !n.live)) return false;
  for (const node of nodes) if (!(await clusterOk(node))) return false;
  const views = await liveViews(nodes);
  if (!agree(views)) return false;
  const view = [...views.values()][0] ?? [];
  if (view.length !== nodes.length || view.some(troubled)) return false;
  const masters = view.filter((e) => e.role === 'master' && e.slots.length > 0);
  if (masters.length !== primaries) return false;
  if (masters.some((m) => view.filter((e) => e.role === 'slave' && e.masterId === m.id).length !== replicas)) return false;
  for (const node of nodes) if (!(await linkUp(node))) return false;
  return true;
}

/**
 * Rejoined after a restart: the node says the cluster is up, the live nodes agree, none flags the
 * node, and as a replica its link is up. Other nodes may still be down (a restart during an outage).
 */
export async function clusterRejoined(node: ManagedNode, nodes: readonly ManagedNode[]): Promise<boolean> {
  if (!(await clusterOk(node))) return false;
  const views = await liveViews(nodes);
  if (!agree(views)) return false;
  for (const view of views.values()) {
    const self = view.find((e) => e.port === node.port);
    if (self === undefined || troubled(self)) return false;
  }
  return linkUp(node);
}

/**
 * The master serving `slot`: among the unflagged masters the live nodes' views name for it, the
 * one with the newest config epoch. Right after a failover some nodes still name the old master
 * until gossip reaches them; the promoted replica's claim carries the higher epoch, which is also
 * how the nodes themselves settle it.
 */
export function masterOfSlot(views: Iterable<readonly ClusterEntry[]>, slot: number): ClusterEntry | undefined {
  let best: ClusterEntry | undefined;
  for (const view of views) {
    for (const e of view) {
      const serves = e.role === 'master' && !troubled(e) && e.slots.some(([a, b]) => slot >= a && slot <= b);
      if (serves && (best === undefined || e.epoch > best.epoch)) best = e;
    }
  }
  return best;
}
