/**
 * Prints the scrypt hash of a password for OIDC_USERS_FILE (`password_hash`).
 * Usage: npx tsx scripts/hash-password.ts            (reads the password from stdin)
 */
import { hashPassword } from '../src/auth/credentials.js';

let input = '';
process.stdin.setEncoding('utf8');
for await (const chunk of process.stdin) input += chunk;
const password = input.replace(/\r?\n$/, '');
if (password === '') {
  process.stderr.write('usage: echo -n PASSWORD | npx tsx scripts/hash-password.ts\n');
  process.exit(2);
}
process.stdout.write(`${await hashPassword(password)}\n`);
