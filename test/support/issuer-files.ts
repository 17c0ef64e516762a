/**
 * The embedded issuer's users and clients files for a test (OIDC_USERS_FILE, OIDC_CLIENTS_FILE), in
 * a temporary folder of their own: passwords are given in clear and written hashed, as
 * `scripts/hash-password.ts` writes them.
 */
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { hashPassword } from '../../src/auth/credentials.js';

/** A user of the issuer, its password in clear. */
export interface IssuerUser {
  readonly username: string;
  readonly password: string;
  readonly sub: string;
  readonly admin?: boolean;
  readonly name?: string;
  readonly email?: string;
}

/** The written files: the settings that name them, and their removal. */
export interface IssuerFiles {
  readonly env: { readonly OIDC_USERS_FILE: string; readonly OIDC_CLIENTS_FILE: string };
  remove(): Promise<void>;
}

/** Writes `users` (hashing their passwords) and `clients` (as the clients file holds them) under a fresh folder named after `label`. */
export async function writeIssuerFiles(label: string, users: readonly IssuerUser[], clients: readonly object[]): Promise<IssuerFiles> {
  const dir = await mkdtemp(join(tmpdir(), `${label}-`));
  const hashed = await Promise.all(users.map(async ({ password, ...user }) => ({ ...user, password_hash: await hashPassword(password) })));
  const env = { OIDC_USERS_FILE: join(dir, 'users.json'), OIDC_CLIENTS_FILE: join(dir, 'clients.json') };
  await writeFile(env.OIDC_USERS_FILE, JSON.stringify(hashed));
  await writeFile(env.OIDC_CLIENTS_FILE, JSON.stringify(clients));
  return { env, remove: () => rm(dir, { recursive: true, force: true }) };
}
