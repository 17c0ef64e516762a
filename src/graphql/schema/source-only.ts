/**
 * Resolvers that read nothing but their parent value: no arguments, no context, no `info`, no I/O,
 * no promise. A subscription push whose every field resolves so (or by the default property read)
 * is answered without graphql-js's execution (`../fanout/plain-execution.ts`), which marks them
 * through this one table rather than trusting a field's name.
 */
const marked = new WeakSet<object>();

/** Marks `resolve` as reading only its parent value, synchronously; returns it. */
export function sourceOnly<T extends (parent: never) => unknown>(resolve: T): T {
  marked.add(resolve);
  return resolve;
}

/** Whether `resolve` was marked by {@link sourceOnly}. */
export function isSourceOnly(resolve: unknown): boolean {
  return typeof resolve === 'function' && marked.has(resolve);
}
