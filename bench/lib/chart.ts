/**
 * Charts of benchmark figures as SVG, drawn in Node without a browser or a native canvas:
 * a vega-lite spec is compiled to vega, and vega's headless view serializes its scene graph to SVG
 * (text widths are estimated, which is all an SVG needs).
 */
import * as vega from 'vega';
import { compile, type TopLevelSpec } from 'vega-lite';

/** One point of a line chart: `series` names the line it belongs to. */
export interface LinePoint {
  readonly x: number;
  readonly y: number;
  readonly series: string;
}

/** A line chart: one line per series, x on a log scale unless `logX` is false. */
export interface LineChart {
  readonly title: string;
  readonly xTitle: string;
  readonly yTitle: string;
  readonly points: readonly LinePoint[];
  readonly logX?: boolean;
  /** Starts the y axis at zero (default), so a flat line looks flat rather than zoomed into noise. */
  readonly zeroY?: boolean;
}

/** One bar of a grouped bar chart: bars of the same `group` stand side by side. */
export interface Bar {
  readonly group: string;
  readonly bar: string;
  readonly value: number;
}

/** A grouped bar chart, with an optional horizontal rule (a ceiling at 1.0, say). */
export interface BarChart {
  readonly title: string;
  readonly yTitle: string;
  readonly bars: readonly Bar[];
  readonly rule?: { readonly value: number; readonly label: string };
  /** The bars' order within each group and in the legend (default: first seen). */
  readonly order?: readonly string[];
}

const WIDTH = 520;
// Labels name a benchmark and its variant, or a series: let them be long rather than cut.
const LABELS_UNCUT = { axis: { labelLimit: 0 }, legend: { labelLimit: 0 } };
const HEIGHT = 300;

/** The vega-lite spec of a line chart (points marked, so a curve of two points still reads). */
export function lineChartSpec(chart: LineChart): TopLevelSpec {
  // Ticks at the points' own x values, and no domain rounded out to the next power of ten.
  const xs = [...new Set(chart.points.map((p) => p.x))].sort((a, b) => a - b);
  return {
    $schema: 'https://vega.github.io/schema/vega-lite/v6.json',
    title: chart.title,
    width: WIDTH,
    height: HEIGHT,
    background: 'white',
    data: { values: chart.points.map((p) => ({ ...p })) },
    config: LABELS_UNCUT,
    mark: { type: 'line', point: true },
    encoding: {
      x: {
        field: 'x',
        type: 'quantitative',
        title: chart.xTitle,
        scale: { ...(chart.logX === false ? { zero: false } : { type: 'log' }), nice: false },
        axis: { values: xs, grid: false },
      },
      y: { field: 'y', type: 'quantitative', title: chart.yTitle, scale: { zero: chart.zeroY ?? true } },
      color: { field: 'series', type: 'nominal', title: null, legend: { orient: 'bottom' } },
    },
  };
}

/**
 * The vega-lite spec of a grouped bar chart, drawn horizontally so that long group labels stay
 * readable: one row per group, one colour per bar within it, the rule drawn across.
 */
export function barChartSpec(chart: BarChart): TopLevelSpec {
  const order = chart.order ?? [...new Set(chart.bars.map((b) => b.bar))];
  const value = { field: 'value', type: 'quantitative' as const };
  const bars = {
    mark: { type: 'bar' as const },
    encoding: {
      y: { field: 'group', type: 'nominal' as const, title: null, sort: null },
      yOffset: { field: 'bar', type: 'nominal' as const, sort: order as string[] },
      x: { ...value, title: chart.yTitle },
      color: { field: 'bar', type: 'nominal' as const, title: null, sort: order as string[], legend: { orient: 'bottom' as const } },
    },
  };
  const labels = {
    mark: { type: 'text' as const, align: 'left' as const, dx: 3, fontSize: 9 },
    encoding: { ...bars.encoding, text: { ...value, format: '.2f' } },
  };
  const rule = chart.rule;
  return {
    $schema: 'https://vega.github.io/schema/vega-lite/v6.json',
    title: chart.title,
    width: WIDTH,
    // The step is one bar's (the offset channel's band), not a group's.
    height: { step: 14 },
    background: 'white',
    config: LABELS_UNCUT,
    data: { values: chart.bars.map((b) => ({ ...b })) },
    layer:
      rule === undefined
        ? [bars, labels]
        : [
            bars,
            labels,
            { data: { values: [{ value: rule.value }] }, mark: { type: 'rule', strokeDash: [4, 4], color: 'black' }, encoding: { x: value } },
            {
              data: { values: [{ value: rule.value, label: rule.label }] },
              mark: { type: 'text', y: -4, align: 'left', dx: 3, fontSize: 9 },
              encoding: { x: value, text: { field: 'label' } },
            },
          ],
  } as TopLevelSpec;
}

/** Renders a vega-lite spec to an SVG document. */
export async function renderSvg(spec: TopLevelSpec): Promise<string> {
  const view = new vega.View(vega.parse(compile(spec).spec), { renderer: 'none' });
  try {
    return await view.toSVG();
  } finally {
    view.finalize();
  }
}

/** Renders a line chart to SVG. */
export function renderLineChart(chart: LineChart): Promise<string> {
  return renderSvg(lineChartSpec(chart));
}

/** Renders a grouped bar chart to SVG. */
export function renderBarChart(chart: BarChart): Promise<string> {
  return renderSvg(barChartSpec(chart));
}
