/**
 * The highest rate a server sustains: rates tried in increasing order, stopping at the first one
 * that fails twice (later rates are not tried: a server that falls behind at one rate does not
 * catch up at a higher one, and each failing step costs the longest run). A failed step is measured
 * once more before the search stops: on a noisy machine a single bad step (another process taking
 * the cores for a second) made a ceiling read 200 records/s where it held 1,000 in the same run.
 */

/** One measurement of a step: the first, or its repeat after a failure. */
export interface Step<T> {
  readonly rate: number;
  readonly result: T;
  readonly ok: boolean;
  /** 1 for the first measurement of the rate, 2 for its repeat. */
  readonly attempt: 1 | 2;
}

/** What the search found: every measurement made, and the highest rate that passed (0 when none did). */
export interface StepSearch<T> {
  readonly steps: readonly Step<T>[];
  readonly sustained: number;
}

/**
 * Measures `rates` in increasing order, each failed one once more, until one fails twice; returns
 * every measurement and the highest rate passed.
 */
export async function stepSearch<T>(rates: readonly number[], measure: (rate: number) => Promise<T>, passes: (result: T) => boolean): Promise<StepSearch<T>> {
  const steps: Step<T>[] = [];
  let sustained = 0;
  for (const rate of [...rates].sort((a, b) => a - b)) {
    let ok = false;
    for (const attempt of [1, 2] as const) {
      const result = await measure(rate);
      ok = passes(result);
      steps.push({ rate, result, ok, attempt });
      if (ok) break;
    }
    if (!ok) break;
    sustained = rate;
  }
  return { steps, sustained };
}
