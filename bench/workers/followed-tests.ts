/**
 * Follows `tests` seeded tests (bench/lib/seed.ts's ids), one `testMessages` subscription each,
 * `perSocket` of them on each WebSocket, then stays idle until SIGTERM. Prints `{ open, sockets }`
 * once every subscription has been taken.
 * Usage: followed-tests.ts <url> <token> <tests> <perSocket> [first]
 * `first`: the index of the first seeded test followed (the warm-up follows others than the measured run).
 */
import { follow, inSlices, serviceClients } from '../lib/followers.js';
import { seedIds } from '../lib/seed.js';

const [url = '', token = '', testsArg = '1', perSocketArg = '1', firstArg = '0'] = process.argv.slice(2);
const ids = seedIds(Number(firstArg) + Number(testsArg)).slice(Number(firstArg));
const perSocket = Number(perSocketArg);
const socketCount = Math.ceil(ids.length / perSocket);
await inSlices(serviceClients(url, token, socketCount), 50, (client, i) => follow(client, ids.slice(i * perSocket, (i + 1) * perSocket), true));
process.once('SIGTERM', () => process.exit(0));
console.log(JSON.stringify({ open: ids.length, sockets: socketCount }));
setInterval(() => undefined, 60_000);
