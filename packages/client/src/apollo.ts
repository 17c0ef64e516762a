/**
 * `@result-collection-service/client/apollo`: exact resume inside Apollo Client
 * (`apollo-resume-link.ts`). A subpath of its own, so that only applications that use Apollo
 * Client import it (`@apollo/client` and `rxjs` are optional peer dependencies).
 */
export { createResumeLink, type ResumeLinkOptions } from './apollo-resume-link.js';
