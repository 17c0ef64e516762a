/** RFC 9457 problem details: the one error body of the REST routes. */
import type { Response } from 'express';
import { STATUS_CODES } from 'node:http';
import type { ErrorCode } from '../base/errors.js';
import { httpStatusFor } from '../base/errors.js';

/** Sends `application/problem+json` with the HTTP status of `code`. */
export function sendProblem(
  res: Response,
  code: ErrorCode,
  detail: string,
  extra: { status?: number; instance?: string; headers?: Record<string, string>; members?: Record<string, string | number> } = {},
): void {
  const status = extra.status ?? httpStatusFor(code);
  // A problem holds at one moment for one caller: none may be kept by a cache (a 404 is cacheable by default).
  res.setHeader('Cache-Control', 'no-store');
  for (const [name, value] of Object.entries(extra.headers ?? {})) res.setHeader(name, value);
  res
    .status(status)
    .type('application/problem+json')
    .send(
      JSON.stringify({
        // "about:blank": the HTTP status says what kind of problem it is; `code` is our stable name.
        type: 'about:blank',
        title: STATUS_CODES[status] ?? 'Error',
        status,
        detail,
        ...(extra.instance === undefined ? {} : { instance: extra.instance }),
        code,
        // Extension members (RFC 9457 §3.2), such as the request id of an unexpected error.
        ...extra.members,
      }),
    );
}
