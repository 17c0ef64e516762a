/**
 * The median of `values` as every benchmark reports it: for an even count the upper of the two
 * middle values (a value measured, never an average of two runs), NaN for none (the rows' "no
 * value", as for a benchmark that failed). `values` is left unsorted.
 */
export function median(values: readonly number[]): number {
  return [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)] ?? Number.NaN;
}
