/**
 * The highest rate a server sustains: rates tried in increasing order, stopping at the first one
 * that fails (later rates are not tried: a server that falls behind at one rate does not catch up at
 * a higher one, and each failing step costs the longest run).
 */

/** One step's outcome. */
export interface Step<T> {
  readonly rate: number;
  readonly result: T;
  readonly ok: boolean;
}

/** What the search found: every step tried, and the highest rate that passed (0 when none did). */
export interface StepSearch<T> {
  readonly steps: readonly Step<T>[];
  readonly sustained: number;
}

/** Measures `rates` in increasing order until `passes` says no; returns every step and the highest rate passed. */
export async function stepSearch<T>(rates: readonly number[], measure: (rate: number) => Promise<T>, passes: (result: T) => boolean): Promise<StepSearch<T>> {
  const steps: Step<T>[] = [];
  let sustained = 0;
  for (const rate of [...rates].sort((a, b) => a - b)) {
    const result = await measure(rate);
    const ok = passes(result);
    steps.push({ rate, result, ok });
    if (!ok) break;
    sustained = rate;
  }
  return { steps, sustained };
}
