/**
 * Makes the embedded issuer (oidc-provider, a Koa application) see a request's client address,
 * scheme and host exactly as Express does under `TRUST_PROXY`.
 *
 * Koa has one switch, `proxy`: on, it takes `X-Forwarded-Proto`, `X-Forwarded-Host` and
 * `X-Forwarded-For` from any peer; it cannot trust some peers (a list of CIDRs) and not others. With
 * `proxy` on, any client reaching the service could then name the scheme and host the issuer writes
 * into its discovery document and redirects. So the issuer's request reads those three from the
 * Express request it is handed (the issuer is mounted in the service's Express app), which has
 * already decided, per peer, which forwarded headers to believe.
 */
import type { IncomingMessage } from 'node:http';
import type { TLSSocket } from 'node:tls';
import type { Request } from 'express';
import type { TrustProxy } from '../config/trust-proxy.js';
import type { Provider } from './oidc-provider.js';

/** Wires `provider` to Express's answers; `trustProxy` only sets Koa's own switch to agree. */
export function followExpressProxyTrust(provider: Provider, trustProxy: TrustProxy): void {
  // Off unless some proxy is trusted, so no Koa getter left to itself reads X-Forwarded-*.
  provider.proxy = trustProxy !== false;
  Object.defineProperties(provider.request, {
    protocol: {
      configurable: true,
      get(this: { req: IncomingMessage }) {
        return asSeenByExpress(this.req).protocol;
      },
    },
    host: {
      configurable: true,
      get(this: { req: IncomingMessage }) {
        return asSeenByExpress(this.req).host;
      },
    },
    ips: {
      configurable: true,
      get(this: { req: IncomingMessage }) {
        return asSeenByExpress(this.req).ips;
      },
    },
    ip: {
      configurable: true,
      get(this: { req: IncomingMessage }) {
        return asSeenByExpress(this.req).ip;
      },
    },
  });
}

/** What Express says of the request; for a request that did not come through Express, the peer alone. */
function asSeenByExpress(req: IncomingMessage): { protocol: string; host: string; ips: string[]; ip: string } {
  const express = req as Partial<Request>;
  if (typeof express.app?.get === 'function') {
    return { protocol: express.protocol ?? 'http', host: express.host ?? '', ips: express.ips ?? [], ip: express.ip ?? '' };
  }
  return {
    protocol: (req.socket as TLSSocket).encrypted ? 'https' : 'http',
    host: req.headers.host ?? '',
    ips: [],
    ip: req.socket.remoteAddress ?? '',
  };
}
