/** The cursor a result carries: `cursor` of its first top-level field that has one (`testMessages { cursor }`). */
export function cursorOf(result: unknown): string | undefined {
  const data = (result as { data?: unknown } | null)?.data;
  if (typeof data !== 'object' || data === null) return undefined;
  for (const field of Object.values(data)) {
    const cursor = (field as { cursor?: unknown } | null)?.cursor;
    if (typeof cursor === 'string') return cursor;
  }
  return undefined;
}
