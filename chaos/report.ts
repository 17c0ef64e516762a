/**
 * A chaos run's report, written like the benchmark's: a Markdown table (the checks, the figures,
 * the faults by kind with their longest unavailability, the memory slopes), the history's figures
 * as JSON, and a timeline chart (SVG): the fault windows by kind against the push latency (p99 per
 * 10 s) and the failed reads.
 */
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { inFault, type Verdict } from './checker.js';
import type { History } from './history.js';

const BUCKET_MS = 10_000;

/** A line on the faults that could not be injected or healed (they count for nothing above), if any. */
function failedFaults(history: History): string[] {
  const failed = history.faults.filter((fault) => fault.failed !== undefined);
  if (failed.length === 0) return [];
  return [
    `Faults that could not be injected or healed, not counted above: ${failed.length} (${failed
      .map((f) => `${f.kind}: ${f.failed}`)
      .slice(0, 5)
      .join('; ')}).\n`,
  ];
}

/** The longest run of failed reads (consecutive failures, first to last) that overlaps each fault kind's windows, in seconds. */
function unavailability(history: History): Map<string, { count: number; longestFaultS: number; longestOutageS: number }> {
  const byKind = new Map<string, { count: number; longestFaultS: number; longestOutageS: number }>();
  const outages: Array<{ start: number; end: number }> = [];
  let current: { start: number; end: number } | undefined;
  for (const read of history.reads) {
    const failed = read.status === 0 || read.status >= 500;
    if (failed) current = current === undefined ? { start: read.at, end: read.at } : { ...current, end: read.at };
    else if (current !== undefined) {
      outages.push(current);
      current = undefined;
    }
  }
  if (current !== undefined) outages.push(current);
  for (const fault of history.faults) {
    if (fault.failed !== undefined) continue;
    const entry = byKind.get(fault.kind) ?? { count: 0, longestFaultS: 0, longestOutageS: 0 };
    const end = fault.end ?? Date.now();
    entry.count += 1;
    entry.longestFaultS = Math.max(entry.longestFaultS, (end - fault.start) / 1000);
    for (const outage of outages)
      if (outage.end >= fault.start && outage.start <= end) entry.longestOutageS = Math.max(entry.longestOutageS, (outage.end - outage.start) / 1000);
    byKind.set(fault.kind, entry);
  }
  return byKind;
}

/** p99 of each 10 s bucket of push latency, and the failed reads per bucket. */
function series(history: History) {
  const buckets = new Map<number, { latencies: number[]; failed: number }>();
  const bucket = (at: number) => {
    const key = Math.floor((at - history.startedAt) / BUCKET_MS);
    const entry = buckets.get(key) ?? { latencies: [], failed: 0 };
    buckets.set(key, entry);
    return entry;
  };
  for (const p of history.pushLatency) bucket(p.at).latencies.push(p.ms);
  for (const r of history.reads) if (r.status === 0 || r.status >= 500) bucket(r.at).failed += 1;
  return [...buckets.entries()]
    .sort(([a], [b]) => a - b)
    .map(([key, { latencies, failed }]) => {
      const sorted = latencies.sort((a, b) => a - b);
      return {
        seconds: (key * BUCKET_MS) / 1000,
        p99: sorted.length ? (sorted[Math.min(sorted.length - 1, Math.floor(sorted.length * 0.99))] as number) : 0,
        failed,
      };
    });
}

/** The timeline chart: faults as bars on rows by kind, p99 push latency as a line, failed reads as dots. */
export function timelineSvg(history: History): string {
  const points = series(history);
  const kinds = [...new Set(history.faults.map((f) => f.kind))];
  const end = Math.max(Date.now(), ...history.faults.map((f) => f.end ?? 0));
  const totalS = Math.max(1, (end - history.startedAt) / 1000);
  const width = 1000;
  const left = 170;
  const rowH = 16;
  const chartTop = 20 + kinds.length * rowH + 10;
  const chartH = 200;
  const height = chartTop + chartH + 40;
  const x = (s: number) => left + (s / totalS) * (width - left - 10);
  const maxP99 = Math.max(1, ...points.map((p) => p.p99));
  const y = (ms: number) => chartTop + chartH - (ms / maxP99) * chartH;
  const rows = kinds.map((kind, i) => {
    const bars = history.faults
      .filter((f) => f.kind === kind)
      .map((f) => {
        const s = (f.start - history.startedAt) / 1000;
        const e = ((f.end ?? end) - history.startedAt) / 1000;
        return `<rect x="${x(s).toFixed(1)}" y="${20 + i * rowH}" width="${Math.max(1, x(e) - x(s)).toFixed(1)}" height="${rowH - 4}" fill="#d62728" opacity="0.7"/>`;
      });
    return `<text x="5" y="${32 + i * rowH}" font-size="11">${kind}</text>${bars.join('')}`;
  });
  const tickS = totalS > 1200 ? 300 : 60;
  const ticks = Array.from({ length: Math.floor(totalS / tickS) + 1 }, (_, i) => i * tickS).map(
    (t) => `<text x="${x(t).toFixed(1)}" y="${chartTop + chartH + 30}" font-size="10" text-anchor="middle">${t / 60} min</text>`,
  );
  const line = points.map((p) => `${x(p.seconds).toFixed(1)},${y(p.p99).toFixed(1)}`).join(' ');
  const dots = points
    .filter((p) => p.failed > 0)
    .map((p) => `<circle cx="${x(p.seconds).toFixed(1)}" cy="${chartTop + chartH + 10}" r="${Math.min(6, 2 + p.failed / 2).toFixed(1)}" fill="#ff7f0e"/>`);
  return [
    `<svg xmlns="http://www.w3.org/2000/svg" width="${width}" height="${height}" font-family="sans-serif">`,
    `<rect width="100%" height="100%" fill="white"/>`,
    `<text x="5" y="14" font-size="12">faults (red), push latency p99 per 10 s (blue, top ${maxP99} ms), failed reads (orange); ${totalS.toFixed(0)} s</text>`,
    ...rows,
    `<line x1="${left}" y1="${chartTop + chartH}" x2="${width - 10}" y2="${chartTop + chartH}" stroke="#999"/>`,
    `<polyline points="${line}" fill="none" stroke="#1f77b4" stroke-width="1.5"/>`,
    ...dots,
    ...ticks,
    `<text x="5" y="${chartTop + 10}" font-size="11">p99 ${maxP99} ms</text>`,
    `<text x="5" y="${chartTop + chartH + 14}" font-size="11">failed reads</text>`,
    '</svg>',
  ].join('\n');
}

/** The Markdown report. */
export function reportMarkdown(history: History, verdict: Verdict, seed: number, minutes: number): string {
  const f = verdict.figures;
  const lines = [
    `# Chaos run: ${minutes} min, seed ${seed}, ${new Date(history.startedAt).toISOString()}`,
    '',
    '| check | result | detail |',
    '|---|---|---|',
    ...verdict.checks.map((c) => `| ${c.name} | ${c.ok ? 'ok' : '**FAILED**'} | ${c.detail} |`),
    '',
    `| tests started | results acknowledged | stored | handed to followers | lost | duplicated | failed reads in fault windows | outside |`,
    '|---:|---:|---:|---:|---:|---:|---:|---:|',
    `| ${f.tests} | ${f.produced} | ${f.stored} | ${f.delivered} | ${f.lost} | ${f.duplicated} | ${f.errorsInFaults} | ${f.errorsOutsideFaults} |`,
    '',
    '| fault | injected | longest fault | longest run of failed reads overlapping it |',
    '|---|---:|---:|---:|',
    ...[...unavailability(history)].map(([kind, u]) => `| ${kind} | ${u.count} | ${u.longestFaultS.toFixed(1)} s | ${u.longestOutageS.toFixed(1)} s |`),
    '',
    '| replica (its longest-lived process) | memory samples | minutes | RSS slope | heap slope |',
    '|---|---:|---:|---:|---:|',
    ...f.slopes.map(
      (s) => `| ${s.replica} | ${s.samples} | ${s.minutes.toFixed(1)} | ${s.rssMbPerHour.toFixed(1)} MB/h | ${s.heapMbPerHour.toFixed(1)} MB/h |`,
    ),
    '',
    ...history.notes.map((note) => `${note}\n`),
    ...failedFaults(history),
    `Send retries of the external system: ${history.sendRetries}; its requests consumer replaced after it stopped fetching: ${history.externalConsumerRestarts} times. Start requests refused or unanswered: ${history.startFailures.length} (${history.startFailures.filter((f) => !inFault(history, f.at)).length} outside the fault windows). Follower reconnects: ${[...history.followers.values()].reduce((n, r) => n + r.reconnects, 0)}.`,
    '',
  ];
  return lines.join('\n');
}

/** Where a run's files go, without their extension: `<dir>/chaos-<start time>` (its replicas' logs: `<stem>-logs/`). */
export function reportStem(dir: string, history: History): string {
  return join(dir, `chaos-${new Date(history.startedAt).toISOString().replace(/[:.]/g, '-')}`);
}

/** Writes the report, the figures and the chart under `dir`; returns the Markdown's path. */
export function writeReport(dir: string, history: History, verdict: Verdict, seed: number, minutes: number): string {
  mkdirSync(dir, { recursive: true });
  const stem = reportStem(dir, history);
  const markdown = `${stem}.md`;
  writeFileSync(markdown, reportMarkdown(history, verdict, seed, minutes));
  writeFileSync(`${stem}.svg`, timelineSvg(history));
  writeFileSync(
    `${stem}.json`,
    JSON.stringify(
      {
        seed,
        minutes,
        verdict,
        faults: history.faults,
        // Each failure with its time (from the run's start), to be set against the faults.
        failedReads: history.reads.filter((r) => r.status === 0 || r.status >= 500).map((r) => ({ ...r, atS: (r.at - history.startedAt) / 1000 })),
        startFailures: history.startFailures.map((f) => ({ ...f, atS: (f.at - history.startedAt) / 1000 })),
        sendRetries: history.sendRetries,
        externalConsumerRestarts: history.externalConsumerRestarts,
        notes: history.notes,
      },
      null,
      2,
    ),
  );
  return markdown;
}
