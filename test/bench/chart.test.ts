/**
 * Benchmark charts render to SVG in Node, without a browser: a line chart of a cost curve and the
 * grouped bar chart of the service beside the peer and the ceiling, drawn by vega for real.
 */
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { renderBarChart, renderLineChart } from '../../bench/lib/chart.js';
import { peerBars, writeCharts, type CurveRow } from '../../bench/lib/charts-from-rows.js';
import type { Row } from '../../bench/ingest.js';

/** The number of marks of a role in an SVG vega drew (one `<path>` per line, one per bar, ...). */
const marks = (svg: string, role: string) =>
  [...svg.matchAll(new RegExp(`class="mark-${role}[^"]*"[^>]*>(.*?)</g>`, 'gs'))].map((m) => (m[1] ?? '').match(/<path/g)?.length ?? 0);

describe('line chart', () => {
  it('draws one line per series on a log x axis, with its titles and legend', async () => {
    const points = [1_000, 10_000, 100_000, 1_000_000].flatMap((x, i) => [
      { x, y: 2 + i * 0.01, series: 'service' },
      { x, y: 1.5, series: 'graphql-js' },
    ]);
    const svg = await renderLineChart({ title: 'p99 by messages stored', xTitle: 'messages stored', yTitle: 'ms', points });
    expect(svg.startsWith('<svg')).toBe(true);
    expect(svg).toContain('p99 by messages stored');
    expect(svg).toContain('messages stored');
    expect(svg).toContain('>service</text>');
    expect(svg).toContain('>graphql-js</text>');
    // Log-scale ticks at the powers of ten the points sit on.
    expect(svg).toMatch(/>1,000,000<\/text>/);
    // One line mark per series.
    expect(marks(svg, 'line').reduce((a, b) => a + b, 0)).toBe(2);
    // Each point is marked too (8 symbols).
    expect(svg.match(/class="mark-symbol[^"]*"[^>]*>(.*?)<\/g>/s)?.[1]?.match(/<path/g)).toHaveLength(8);
  });
});

describe('bar chart', () => {
  it('draws one bar per group and bar, labelled, with the rule', async () => {
    const bars = [
      { group: 'ingest → memory', bar: 'peer', value: 1 },
      { group: 'ingest → memory', bar: 'service', value: 3.2 },
      { group: 'test() [requests/s]', bar: 'peer', value: 1 },
      { group: 'test() [requests/s]', bar: 'service', value: 1.7 },
      { group: 'test() [requests/s]', bar: 'ceiling', value: 1.4 },
    ];
    const svg = await renderBarChart({ title: 'against the peer', yTitle: 'times the peer', bars, rule: { value: 1, label: 'peer line' } });
    expect(svg).toContain('against the peer');
    expect(svg).toContain('ingest → memory');
    expect(svg).toContain('test() [requests/s]');
    expect(svg).toContain('>3.20</text>');
    expect(svg).toContain('peer line');
    expect(marks(svg, 'rect')).toContain(5);
    // The dashed rule of the baseline, drawn as a rule mark of its own (not an axis).
    expect(svg).toMatch(/class="mark-rule role-mark[^"]*"[^>]*><line aria-label="value: 1"[^>]*stroke-dasharray="4,4"/);
  });
});

describe('charts of a run', () => {
  const rows: Array<Row | CurveRow> = [
    {
      benchmark: 'curves',
      variant: 'heap per stored message, 1,000 stored',
      value: 300,
      unit: 'bytes',
      point: { curve: 'heap-per-message-by-stored-messages', series: 'memory store', x: 1000 },
    },
    {
      benchmark: 'curves',
      variant: 'heap per stored message, 10,000 stored',
      value: 290,
      unit: 'bytes',
      point: { curve: 'heap-per-message-by-stored-messages', series: 'memory store', x: 10_000 },
    },
    { benchmark: 'ingest', variant: 'service → memory store', value: 200_000, unit: 'records/s', ratio: 0.8, ratioToPeer: 4 },
    {
      benchmark: 'fan-out',
      variant: '1 test × 1,000 subscribers, 100 records/s, fetch wait 10 ms: service p99',
      value: 20,
      unit: 'ms',
      ratioToPeer: 0.5,
      broker: 'mock',
    },
    {
      benchmark: 'fan-out',
      variant: '1 test × 1,000 subscribers, 100 records/s, fetch wait 10 ms: service p50',
      value: 5,
      unit: 'ms',
      ratioToPeer: 0.5,
      broker: 'mock',
    },
  ];

  it('puts the service and the ceiling against the peer, higher is better, p50s left out', () => {
    const bars = peerBars(rows);
    expect(bars).toEqual([
      { group: 'ingest: → memory store [records/s]', bar: 'common-stack peer', value: 1 },
      { group: 'ingest: → memory store [records/s]', bar: 'service', value: 4 },
      { group: 'ingest: → memory store [records/s]', bar: 'ceiling', value: 5 },
      { group: 'fan-out (mock): 1 test × 1,000 subscribers, 100 records/s: p99 [ms]', bar: 'common-stack peer', value: 1 },
      { group: 'fan-out (mock): 1 test × 1,000 subscribers, 100 records/s: p99 [ms]', bar: 'service', value: 2 },
    ]);
  });

  it('writes one SVG per curve and the peer chart', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'charts-'));
    try {
      const files = await writeCharts(rows, dir);
      expect(files.map((f) => f.slice(dir.length + 1))).toEqual(['heap-per-message-by-stored-messages.svg', 'service-peer-ceiling.svg']);
      expect(readFileSync(files[0] as string, 'utf8')).toContain('heap per stored message');
      expect(readFileSync(files[1] as string, 'utf8')).toContain('common-stack peer');
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
