/**
 * The embedded issuer's sign-in pages (`/interaction/:uid`): the login form and its answer, and the
 * consent step, granted at once (a first-party API: what a client may have is fixed by
 * configuration, so there is no consent screen).
 */
import express, { type Request, type Response, type Router } from 'express';
import type { Logger } from '../base/logger.js';
import { verifyPassword, type UserEntry } from './credentials.js';
import { loginPage } from './login-page.js';
import type { Provider } from './oidc-provider.js';

/** What the sign-in pages use of the issuer. */
export interface InteractionRoutesOptions {
  readonly provider: InstanceType<typeof Provider>;
  readonly usersByName: ReadonlyMap<string, UserEntry>;
  readonly log: Logger;
  /** Marks an answer `Cache-Control: no-store`. */
  readonly noStore: (req: Request, res: Response, next: () => void) => void;
}

// A valid scrypt hash of a random password, checked when the username is unknown.
const UNKNOWN_USER_HASH = 'scrypt$16384$8$1$AAAAAAAAAAAAAAAAAAAAAA$AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA';

/** Adds the sign-in pages to `router`. */
export function addInteractionRoutes(router: Router, options: InteractionRoutesOptions): void {
  const { provider, usersByName, log, noStore } = options;
  router.get('/interaction/:uid', noStore, async (req, res, next) => {
    try {
      const details = await provider.interactionDetails(req, res);
      if (details.prompt.name === 'login') {
        res.type('html').send(loginPage(details.uid, String(details.params.client_id)));
        return;
      }
      if (details.prompt.name === 'consent') {
        // First-party API: what the client may have is fixed by configuration, so no consent screen.
        const missing = details.prompt.details as {
          missingOIDCScope?: string[];
          missingOIDCClaims?: string[];
          missingResourceScopes?: Record<string, string[]>;
        };
        const grant = details.grantId
          ? ((await provider.Grant.find(details.grantId)) as InstanceType<typeof provider.Grant>)
          : new provider.Grant({ accountId: details.session?.accountId as string, clientId: String(details.params.client_id) });
        if (missing.missingOIDCScope) grant.addOIDCScope(missing.missingOIDCScope.join(' '));
        if (missing.missingOIDCClaims) grant.addOIDCClaims(missing.missingOIDCClaims);
        for (const [indicator, scopes] of Object.entries(missing.missingResourceScopes ?? {})) grant.addResourceScope(indicator, scopes.join(' '));
        const grantId = await grant.save();
        await provider.interactionFinished(req, res, { consent: details.grantId ? {} : { grantId } }, { mergeWithLastSubmission: true });
        return;
      }
      res.status(400).json({ error: 'invalid_request', error_description: `unsupported prompt ${details.prompt.name}` });
    } catch (error) {
      next(error);
    }
  });

  router.post('/interaction/:uid', noStore, express.urlencoded({ extended: false, limit: '8kb' }), async (req, res, next) => {
    try {
      const details = await provider.interactionDetails(req, res);
      if (details.prompt.name !== 'login') {
        res.status(400).json({ error: 'invalid_request', error_description: 'no sign-in is pending' });
        return;
      }
      const username = String(req.body?.username ?? '');
      const user = usersByName.get(username);
      // Verify against a fixed hash for unknown names too, so timing does not reveal which exist.
      const ok = await verifyPassword(String(req.body?.password ?? ''), user?.passwordHash ?? UNKNOWN_USER_HASH);
      if (user === undefined || !ok) {
        log.warn({ username: username.slice(0, 64) }, 'failed sign-in');
        res
          .status(401)
          .type('html')
          .send(loginPage(details.uid, String(details.params.client_id), 'Wrong username or password.'));
        return;
      }
      await provider.interactionFinished(req, res, { login: { accountId: user.sub } }, { mergeWithLastSubmission: false });
    } catch (error) {
      next(error);
    }
  });
}
