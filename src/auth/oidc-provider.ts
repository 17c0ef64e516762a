/**
 * The one import of oidc-provider's values in the service. The first import below must stay first:
 * ES modules are evaluated in the order they are imported, so lts-line-notice.ts runs before
 * oidc-provider's top-level runtime check, and this body (which restores the console) after it.
 * Types may be imported from 'oidc-provider' anywhere; values come from here.
 */
import { restoreConsoleWarn } from './lts-line-notice.js';
import Provider, { errors } from 'oidc-provider';

restoreConsoleWarn();

export { Provider, errors };
