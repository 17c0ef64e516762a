/**
 * Where a CPU profile's time went, as a table: `npx tsx bench/profile-summary.ts <file.cpuprofile>
 * [--top=25] [--last=<s>] [--trim=<s>]`. It reads a V8 CPU profile (what `BENCH_CPU_PROF=service`
 * writes to bench/results/profiles/) and prints the busy samples (idle and program samples left out),
 * in milliseconds and as a share, by function (self time), and by the part of the code the time was
 * spent in: the service's own files by folder, each dependency by package, Node's internals, garbage
 * collection. It is how the fan-out profiles in bench/README.md were summarized.
 *
 * `--last=<s>` keeps only the samples of the profile's last `s` seconds, less its final `--trim=<s>`
 * (the worker's stop; `--last=21 --trim=2` is a window of 19 s): a scenario's measured window, without the start-up and the
 * subscribing before it, which at low rates outweigh the window. Two workers' windows compare in
 * milliseconds; their shares alone would hide which one was busier.
 */
import { readFileSync } from 'node:fs';

interface ProfileNode {
  readonly id: number;
  readonly callFrame: { readonly functionName: string; readonly url: string; readonly lineNumber: number; readonly columnNumber: number };
  readonly children?: readonly number[];
}
interface Profile {
  readonly nodes: readonly ProfileNode[];
  readonly samples: readonly number[];
  readonly timeDeltas: readonly number[];
  readonly endTime: number;
}

const [file] = process.argv.slice(2).filter((a) => !a.startsWith('--'));
const option = (name: string, fallback: number) => Number(process.argv.find((a) => a.startsWith(`--${name}=`))?.slice(name.length + 3) ?? fallback);
const top = option('top', 25);
if (file === undefined) {
  console.error('usage: profile-summary.ts <file.cpuprofile> [--top=25] [--last=<s>] [--trim=<s>]');
  process.exit(2);
}
const profile = JSON.parse(readFileSync(file, 'utf8')) as Profile;
const byId = new Map(profile.nodes.map((node) => [node.id, node]));

/** Microseconds of self time per node, within the window. */
const self = new Map<number, number>();
// A sample's time is the profile's end less the deltas after it; the window counts back from the end.
const to = profile.endTime - option('trim', 0) * 1e6;
const from = profile.endTime - option('last', Infinity) * 1e6;
let total = 0;
let at = profile.endTime;
for (let i = profile.samples.length - 1; i >= 0; i--) {
  const delta = profile.timeDeltas[i] ?? 0;
  if (at <= to && at >= from) {
    const id = profile.samples[i] as number;
    self.set(id, (self.get(id) ?? 0) + delta);
    total += delta;
  }
  at -= delta;
}

const IDLE = new Set(['(idle)', '(program)']);
let busy = 0;
const byFunction = new Map<string, number>();
const byPart = new Map<string, number>();
for (const [id, us] of self) {
  const frame = (byId.get(id) as ProfileNode).callFrame;
  if (IDLE.has(frame.functionName)) continue;
  busy += us;
  const where = partOf(frame.url, frame.functionName);
  // Line and column: a transpiled file may be one line, where anonymous functions differ only by column.
  const name = `${frame.functionName || '(anonymous)'}  ${shortUrl(frame.url)}${frame.url ? `:${frame.lineNumber + 1}:${frame.columnNumber + 1}` : ''}`;
  byFunction.set(name, (byFunction.get(name) ?? 0) + us);
  byPart.set(where, (byPart.get(where) ?? 0) + us);
}

console.log(`${file}: ${(total / 1e6).toFixed(1)} s profiled, ${(busy / 1e6).toFixed(1)} s busy (${((100 * busy) / total).toFixed(1)} %)\n`);
print('part of the code', byPart, top);
console.log('');
print('function (self time)', byFunction, top);

function print(title: string, table: Map<string, number>, count: number): void {
  console.log(`| ${title} | ms | share of busy time |\n|---|---:|---:|`);
  for (const [name, us] of [...table].sort((a, b) => b[1] - a[1]).slice(0, count))
    console.log(`| ${name.replace(/\|/g, '\\|')} | ${(us / 1000).toFixed(0)} | ${((100 * us) / busy).toFixed(1)} % |`);
}

/** The part of the code a frame belongs to: a dependency by package, the service's folders, Node's own, the engine's. */
function partOf(url: string, functionName: string): string {
  if (url === '') return functionName.startsWith('(') ? functionName : '(native)';
  if (url.startsWith('node:')) return 'node:internal';
  const dependency = /node_modules\/((?:@[^/]+\/)?[^/]+)/.exec(url);
  if (dependency) return dependency[1] as string;
  const own = /\/(src|bench|tools)\/(.*)\/[^/]+$/.exec(url);
  if (own) return `${own[1]}/${own[2]}`;
  return shortUrl(url);
}

function shortUrl(url: string): string {
  const at = url.search(/\/(src|bench|tools|node_modules)\//);
  return at >= 0 ? url.slice(at + 1) : url;
}
