/**
 * The HTTP metrics' labels come from the service's routes, never from what a client writes: a
 * path's casing (Express matches paths without regard to case, and a mount keeps the request's
 * casing) or a correlation id adds no series. The service runs without a broker (the pipeline's
 * harness).
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startPipelineService, type TestService } from '../support/service.js';

let svc: TestService;
beforeAll(async () => {
  svc = await startPipelineService({ env: { DASHBOARD: 'on', GRAPHQL_IDE: 'on' } });
});
afterAll(() => svc?.stop());

const routesOf = (text: string) => new Set([...text.matchAll(/^rcs_http_request_duration_seconds_count\{[^}]*route="([^"]*)"/gm)].map((m) => m[1] as string));

describe('HTTP metrics series', () => {
  it('are one per route pattern, whatever the casing or the ids of the requests', async () => {
    const paths = [
      '/dashboard/',
      '/DaShBoArD/',
      '/DASHBOARD/',
      '/dashboard/assets/none.js',
      '/DashBoard/Assets/none.js',
      '/tests/one',
      '/tests/Two',
      '/TESTS/three',
      '/GraphQL',
    ];
    for (const path of paths)
      for (const method of ['GET', 'OPTIONS']) await fetch(`${svc.url}${path}`, { method, headers: { origin: 'http://elsewhere.test' } });
    const routes = routesOf(await (await fetch(`${svc.url}/metrics`)).text());
    const seen = [...routes].filter((route) => /dashboard|tests|graphql/i.test(route));
    expect(seen.length).toBeGreaterThan(0);
    // No series names a casing or an id a client chose (a route's own parameter names keep theirs).
    for (const route of seen) expect(route.replace(/:\w+/g, '')).toBe(route.replace(/:\w+/g, '').toLowerCase());
    expect(seen.filter((route) => /one|two|three/i.test(route))).toEqual([]);
    expect(new Set(seen.map((route) => route.toLowerCase())).size).toBe(seen.length);
  });
});
