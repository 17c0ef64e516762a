/**
 * The chaos run: `npm run chaos -- --minutes=N [--seed=S] [--out=DIR] [--steady=api-2] [--faults=cut,frozen] [--upgrade-from=REF]`
 * (`--faults`: only the kinds of fault whose names contain one of the words; `--upgrade-from`: the
 * replicas start on the release REF names and are upgraded to this checkout halfway through,
 * chaos/upgrade.ts, with the nemesis only when `--faults` is given too). It starts the whole system
 * (chaos/stack.ts: three Kafka nodes, a Redis Cluster, three service replicas, HAProxy), runs the
 * users (chaos/workload.ts) and the external system (chaos/external-system.ts) for N minutes while
 * the nemesis (chaos/nemesis.ts) injects faults, then lets the faults heal, the streams finish and
 * the followers complete, checks the whole history (chaos/checker.ts) and writes the report
 * (chaos/report.ts, into chaos/results/ by default). Exits 1 when a check fails. Everything it
 * started stops with it.
 */
import { setTimeout as sleep } from 'node:timers/promises';
import { check } from './checker.js';
import { startExternalSystem } from './external-system.js';
import { createHistory } from './history.js';
import { startNemesis } from './nemesis.js';
import { reportStem, writeReport } from './report.js';
import { startStack } from './stack.js';
import { describeStuckFollowers } from './stuck-followers.js';
import { checkoutRelease, rollingUpgrade } from './upgrade.js';
import { startWorkload } from './workload.js';

const option = (name: string, fallback: string) => process.argv.find((arg) => arg.startsWith(`--${name}=`))?.slice(name.length + 3) ?? fallback;
const minutes = Number(option('minutes', '2'));
const seed = Number(option('seed', String(Date.now() % 100_000)));
const out = option('out', 'chaos/results');
// A replica the nemesis freezes but never restarts, so that its memory trend spans the run.
const steady = option('steady', '');
// How long after the faults stop every stream and follower must have finished: a healthy system
// takes seconds; one that does not recover fails a check instead of holding the run.
const settleMinutes = Number(option('settle', '3'));
const kinds = option('faults', '')
  .split(',')
  .filter((word) => word !== '');
const upgradeFrom = option('upgrade-from', '');
// An upgrade run injects faults only when asked to: the roll is what it tests.
const withFaults = upgradeFrom === '' || kinds.length > 0;
if (!(minutes > 0) || !Number.isInteger(seed) || !(settleMinutes > 0)) {
  console.error('usage: npm run chaos -- --minutes=N [--seed=S] [--out=DIR] [--steady=REPLICA] [--faults=WORD,...] [--settle=MINUTES] [--upgrade-from=REF]');
  process.exit(2);
}

const began = Date.now();
const log = (line: string) => console.error(`[${((Date.now() - began) / 1000).toFixed(0).padStart(5)} s] ${line}`);
const history = createHistory();
const previous = upgradeFrom === '' ? undefined : checkoutRelease(upgradeFrom, log);
const stack = await startStack(log, `${reportStem(out, history)}-logs`, previous === undefined ? {} : { root: previous });
// Interrupted (Ctrl-C, a CI timeout): the replicas, HAProxy and the firewall table go with the run
// (Kafka's and Redis's nodes have watchdogs of their own).
for (const signal of ['SIGINT', 'SIGTERM'] as const) {
  process.once(signal, () => {
    log(`${signal}: stopping everything`);
    void stack.stop().finally(() => process.exit(130));
  });
}
if (stack.noPartitions !== undefined) history.notes.push(`No network partitions were injected: ${stack.noPartitions}.`);
let failed: boolean;
try {
  const external = await startExternalSystem(stack.kafka.bootstrapServers, history);
  const workload = startWorkload(stack, history);
  const nemesis = withFaults ? startNemesis(stack, history, { seed, kinds, ...(steady === '' ? {} : { steady }) }, log) : undefined;
  log(`running for ${minutes} min, seed ${seed}`);
  const loadBegan = Date.now();
  if (upgradeFrom !== '') {
    history.notes.push(`The replicas started on ${upgradeFrom} and were upgraded to this checkout, one at a time, halfway through.`);
    await sleep((minutes * 60_000) / 2);
    await rollingUpgrade(stack, history, process.cwd(), upgradeFrom, log);
    await sleep(Math.max(0, loadBegan + minutes * 60_000 - Date.now()));
  } else await sleep(minutes * 60_000);
  log('stopping the faults and the load');
  await nemesis?.stop();
  const healed = Date.now();
  const left = () => Math.max(0, healed + settleMinutes * 60_000 - Date.now());
  await workload.stopLoad(left());
  log('waiting for the external system to finish its streams and the followers to complete');
  const progress = setInterval(() => log(`still waiting: ${external.unfinished()} result streams, ${workload.unfinished().length} followers`), 30_000);
  await external.drained(left());
  await workload.followersDone(left());
  clearInterval(progress);
  const unfinished = external.unfinished();
  const stuck = workload.unfinished();
  history.settle = { limitMs: settleMinutes * 60_000, tookMs: unfinished === 0 && stuck.length === 0 ? Date.now() - healed : undefined };
  if (unfinished > 0)
    history.notes.push(`The external system had not finished ${unfinished} of its result streams ${settleMinutes} min after the faults stopped.`);
  if (stuck.length > 0) {
    const lines = await describeStuckFollowers(history, stuck, stack.lb.url);
    for (const line of lines) log(`not ended: ${line}`);
    history.notes.push(`${stuck.length} followers had not ended when the run stopped waiting: ${lines.join('; ')}.`);
  }
  // The users and the external system stop before the check: followers still trying (a test whose
  // results never came) would otherwise load the replicas the check reads through.
  await workload.stop();
  await external.stop();
  const verdict = await check(history, stack.lb.url);
  const report = writeReport(out, history, verdict, seed, minutes);
  for (const c of verdict.checks) log(`${c.ok ? 'ok    ' : 'FAILED'} ${c.name}: ${c.detail}`);
  log(`report: ${report}`);
  failed = verdict.checks.some((c) => !c.ok);
} finally {
  await stack.stop();
}
process.exit(failed ? 1 : 0);
