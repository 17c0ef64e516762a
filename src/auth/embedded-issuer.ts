/**
 * The embedded OAuth 2.0 / OIDC authorization server, for running with real tokens out of the box.
 * Built on oidc-provider and mounted on the service's own HTTP server:
 *
 * - `POST /oauth/token`, `/oauth/authorize`, `/oauth/jwks`, `/oauth/revoke`, discovery at
 *   `/.well-known/openid-configuration`, and `/userinfo`.
 * - Grants: client credentials; authorization code with PKCE (S256) required for every client;
 *   refresh tokens rotated on every use, a reused one revoking its whole grant. Implicit, hybrid
 *   and password grants are refused.
 * - Access tokens are RS256 JWTs (`typ: at+jwt`) for this API's audience, verified in-process with
 *   the same verifier as external tokens. Their API scopes are those the client may have; a user's
 *   token carries the admin scope only when the user is an admin too (grantable-scopes.ts).
 * - The client's address, scheme and host are Express's, under `TRUST_PROXY` (issuer-proxy-trust.ts).
 *
 * Grants, codes, sessions and refresh tokens live where the injected adapter keeps them: in Redis
 * with STATE_STORE=redis (redis-oidc-adapter.ts), shared by every replica and kept across restarts;
 * otherwise in oidc-provider's in-memory adapter, where a restart signs everyone out and
 * invalidates refresh tokens (access tokens stay valid until they expire when the signing key is
 * configured).
 */
import { Router, urlencoded, type Request, type Response } from 'express';
import { randomBytes } from 'node:crypto';
import { exportJWK, generateKeyPair, type JWK } from 'jose';
import type { AdapterFactory, ClientMetadata, Configuration, KoaContextWithOIDC } from 'oidc-provider';
import type { Config } from '../config/config.js';
import { ConfigError } from '../base/errors.js';
import type { Logger } from '../base/logger.js';
import { createAccessTokenVerifier } from './access-token-verifier.js';
import type { Auth } from './auth.js';
import { HASHED_SECRET_PREFIX, clientSecretMatches, loadClients, loadUsers, type ClientEntry } from './credentials.js';
import { createGrantableScopes, type TokenHolder } from './grantable-scopes.js';
import { followExpressProxyTrust } from './issuer-proxy-trust.js';
import { addInteractionRoutes } from './issuer-interactions.js';
import { errors as oidcErrors, Provider } from './oidc-provider.js';
import { userinfoHandler } from './userinfo.js';

const PRIVATE_MEMBERS = ['d', 'p', 'q', 'dp', 'dq', 'qi'] as const;

/** What the embedded issuer is built with besides its configuration. */
export interface EmbeddedAuthOptions {
  /** Where oidc-provider keeps sessions, grants, codes and tokens; its in-memory adapter when absent. */
  readonly adapter?: AdapterFactory;
}

/** Creates the embedded issuer and the verifier of its tokens. */
export async function createEmbeddedAuth(config: Config, logger: Logger, options: EmbeddedAuthOptions = {}): Promise<Auth> {
  const log = logger.child({ component: 'issuer' });
  const issuer = config.auth.issuer;
  const audience = config.auth.audience;

  const signingKey = await loadSigningKey(config, log);
  const publicKey = Object.fromEntries(Object.entries(signingKey).filter(([k]) => !(PRIVATE_MEMBERS as readonly string[]).includes(k))) as JWK;
  const cookieKeys = config.issuer.cookieKeys.length > 0 ? [...config.issuer.cookieKeys] : [randomBytes(32).toString('base64url')];
  if (config.issuer.cookieKeys.length === 0) log.warn('OIDC_COOKIE_KEYS is not set: a random cookie key was generated; sign-in sessions end at restart');

  const clients = loadClients(config.issuer.clientsFile);
  const users = loadUsers(config.issuer.usersFile);
  if (clients.length === 0) log.warn('OIDC_CLIENTS_FILE lists no clients: the embedded issuer cannot issue tokens');
  const grantableScopes = createGrantableScopes({ clients, users, adminScope: config.auth.adminScope });
  // Client-credentials tokens carry the client id as `sub`; a client named like a user's subject
  // would own that user's tests.
  const clash = clients.find((c) => users.some((u) => u.sub === c.client_id));
  if (clash !== undefined) throw new ConfigError('OIDC_CLIENTS_FILE', `client_id "${clash.client_id}" is also a user's sub; they must differ`);
  const usersByName = new Map(users.map((u) => [u.username, u]));
  const usersBySub = new Map(users.map((u) => [u.sub, u]));
  const ttl = config.issuer.accessTokenTtlSeconds;

  const configuration: Configuration = {
    ...(options.adapter ? { adapter: options.adapter } : {}),
    clients: clients.map(toProviderClient),
    jwks: { keys: [signingKey] },
    cookies: { keys: cookieKeys },
    clientAuthMethods: ['client_secret_basic', 'client_secret_post', 'none'],
    routes: {
      authorization: '/oauth/authorize',
      token: '/oauth/token',
      jwks: '/oauth/jwks',
      revocation: '/oauth/revoke',
      end_session: '/oauth/session/end',
      userinfo: '/oauth/userinfo',
      introspection: '/oauth/introspect',
      pushed_authorization_request: '/oauth/par',
      code_verification: '/oauth/device',
      device_authorization: '/oauth/device/auth',
      backchannel_authentication: '/oauth/backchannel',
      registration: '/oauth/reg',
      challenge: '/oauth/challenge',
      credential: '/oauth/credential',
    } as Configuration['routes'],
    responseTypes: ['code'],
    pkce: { required: () => true },
    scopes: ['openid', 'offline_access', 'profile', 'email'],
    claims: { openid: ['sub'], profile: ['name'], email: ['email'] },
    async findAccount(_ctx, sub) {
      const user = usersBySub.get(sub);
      if (user === undefined) return undefined;
      return { accountId: sub, claims: async () => ({ sub, name: user.name, email: user.email }) };
    },
    features: {
      devInteractions: { enabled: false },
      clientCredentials: { enabled: true },
      revocation: { enabled: true },
      // The access tokens are JWTs for this API, which oidc-provider's own userinfo refuses, so
      // /userinfo is served below with the same verifier as the API.
      userinfo: { enabled: false },
      pushedAuthorizationRequests: { enabled: false },
      resourceIndicators: {
        enabled: true,
        defaultResource: async () => audience,
        useGrantedResource: async () => true,
        // Asked at the authorization request (what the grant may hold) and again at every token
        // issued, refreshes included, with the user's current entry: a user whose admin flag was
        // removed gets no admin scope from a grant made before.
        getResourceServerInfo: async (ctx, indicator, client) => {
          if (indicator !== audience) throw new oidcErrors.InvalidTarget();
          return {
            scope: grantableScopes(client.clientId, tokenHolder(ctx)).join(' '),
            audience,
            accessTokenTTL: ttl,
            accessTokenFormat: 'jwt',
            jwt: { sign: { alg: 'RS256' } },
          };
        },
      },
    },
    // Refresh tokens for every client allowed the grant; `offline_access` is dropped by the
    // authorization endpoint without a consent prompt, so it cannot be the criterion.
    issueRefreshToken: async (_ctx, client) => client.grantTypeAllowed('refresh_token'),
    rotateRefreshToken: true,
    expiresWithSession: async () => false,
    interactions: { url: (_ctx, interaction) => `/interaction/${interaction.uid}` },
    ttl: {
      // Functions, not numbers: a number would override the resource server's accessTokenTTL.
      AccessToken: (_ctx: KoaContextWithOIDC, token: { resourceServer?: { accessTokenTTL?: number } }) => token.resourceServer?.accessTokenTTL ?? ttl,
      ClientCredentials: (_ctx: KoaContextWithOIDC, token: { resourceServer?: { accessTokenTTL?: number } }) => token.resourceServer?.accessTokenTTL ?? ttl,
      AuthorizationCode: 60,
      IdToken: 3600,
      RefreshToken: config.issuer.refreshTokenTtlSeconds,
      Grant: config.issuer.refreshTokenTtlSeconds,
      Interaction: 600,
      Session: 86_400,
    } as Configuration['ttl'],
    async renderError(ctx, out) {
      ctx.type = 'application/json; charset=utf-8';
      ctx.body = out;
    },
    discovery: { userinfo_endpoint: `${issuer}/userinfo` },
    // A single-page app finishes code + PKCE with a fetch from the origin it is redirected back to.
    // Confidential clients keep their secret on a server, so no browser calls for them.
    clientBasedCORS: (_ctx, origin, client) =>
      client.tokenEndpointAuthMethod === 'none' && (client.redirectUris ?? []).some((uri) => URL.canParse(uri) && new URL(uri).origin === origin),
  };

  const provider = new Provider(issuer, configuration);
  followExpressProxyTrust(provider, config.trustProxy);
  // Client secrets may be stored hashed (`sha256:<hex>`); oidc-provider compares plain text only.
  const compare = provider.Client.prototype.compareClientSecret;
  provider.Client.prototype.compareClientSecret = function compareClientSecret(this: { clientSecret?: string }, actual: string) {
    const stored = this.clientSecret;
    if (stored?.startsWith(HASHED_SECRET_PREFIX)) return clientSecretMatches(stored, actual);
    return compare.call(this, actual);
  };
  provider.on('server_error', (_ctx: unknown, error: Error) => log.error({ err: error }, 'authorization server error'));

  const verifyAccessToken = createAccessTokenVerifier({
    keys: { kind: 'local', jwks: { keys: [publicKey] } },
    algorithms: ['RS256'],
    issuers: [issuer],
    audience,
    clockToleranceSeconds: config.auth.clockToleranceSeconds,
    cacheSeconds: config.auth.verifiedTokenCacheSeconds,
    tokenType: 'at+jwt',
  });

  const router = Router();
  const noStore = (_req: Request, res: Response, next: () => void) => {
    res.setHeader('Cache-Control', 'no-store');
    next();
  };

  addInteractionRoutes(router, { provider, usersByName, log, noStore });

  const userinfo = userinfoHandler({ verifyAccessToken, usersBySub });
  router.get('/userinfo', userinfo);
  // OIDC Core 5.3.1: GET or POST; a POST's token may be a form parameter (userinfo.ts).
  router.post('/userinfo', urlencoded({ extended: false, limit: '8kb' }), userinfo);

  // Only these paths reach oidc-provider (app.all keeps the full path, unlike app.use('/oauth')).
  const callback = provider.callback();
  router.all(['/oauth/*splat', '/.well-known/openid-configuration', '/.well-known/oauth-authorization-server'], (req, res) => {
    void callback(req, res);
  });

  return { verifyAccessToken, issuer: router, dispose: async () => {} };
}

/** Whom the token being decided is for: the client (client credentials), or the signed-in user. */
function tokenHolder(ctx: KoaContextWithOIDC): TokenHolder {
  if (ctx.oidc.params?.grant_type === 'client_credentials') return { kind: 'client' };
  // The account of the grant at the token endpoint; the session's at the authorization endpoint.
  return { kind: 'user', sub: ctx.oidc.account?.accountId ?? ctx.oidc.session?.accountId };
}

function toProviderClient(client: ClientEntry): ClientMetadata {
  const codeFlow = client.grant_types.includes('authorization_code');
  return {
    client_id: client.client_id,
    ...(client.client_secret ? { client_secret: client.client_secret } : {}),
    grant_types: [...client.grant_types],
    response_types: codeFlow ? (['code'] as const) : [],
    redirect_uris: [...client.redirect_uris],
    token_endpoint_auth_method: (client.token_endpoint_auth_method ??
      (client.client_secret ? 'client_secret_basic' : 'none')) as ClientMetadata['token_endpoint_auth_method'],
  };
}

async function loadSigningKey(config: Config, log: Logger): Promise<JWK> {
  const configured = config.issuer.signingKey;
  if (configured !== null) {
    if (configured.kty !== 'RSA' || typeof configured.d !== 'string') throw new ConfigError('OIDC_SIGNING_KEY', 'must be a private RSA JWK');
    return { alg: 'RS256', use: 'sig', kid: typeof configured.kid === 'string' ? configured.kid : 'signing-key', ...configured } as JWK;
  }
  log.warn('OIDC_SIGNING_KEY is not set: a signing key was generated; tokens issued before a restart will be refused after it');
  const { privateKey } = await generateKeyPair('RS256', { extractable: true });
  return { ...(await exportJWK(privateKey)), alg: 'RS256', use: 'sig', kid: `generated-${randomBytes(6).toString('base64url')}` };
}
