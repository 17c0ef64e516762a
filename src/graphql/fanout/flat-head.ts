/**
 * A response that stays open (an event stream, a multipart subscription) keeps its head, Node's
 * text of the status line and headers (`_header`), for as long as it lasts, as Node built it: a
 * concatenation of every header's name, separator and value, which V8 holds as a tree of about forty
 * string pieces (1.2 KB) where the same text as one string takes about 0.3 KB. Made one string here,
 * once the head is written; Node reads it only to send it (and to say the head was sent), and its
 * characters are Latin-1 by Node's own check of header values, so the copy is exact.
 */
import type { ServerResponse } from 'node:http';

/** Replaces a written head by the same text as one string. */
export function flattenHead(res: ServerResponse): void {
  const written = res as ServerResponse & { _header?: unknown };
  if (typeof written._header === 'string') written._header = Buffer.from(written._header, 'latin1').toString('latin1');
}
