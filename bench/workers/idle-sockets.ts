/**
 * Opens `count` WebSockets, each with one `testMessages` subscription, then stays idle until
 * SIGTERM. Prints `{ open }` once every subscription is live.
 * Usage: idle-sockets.ts <url> <token> <count> <id>
 */
import { follow, inSlices, serviceClients } from '../lib/followers.js';

const [url = '', token = '', countArg = '1', id = ''] = process.argv.slice(2);
const count = Number(countArg);
await inSlices(serviceClients(url, token, count), 200, (client) => follow(client, [id], false));
process.once('SIGTERM', () => process.exit(0));
console.log(JSON.stringify({ open: count }));
setInterval(() => undefined, 60_000);
