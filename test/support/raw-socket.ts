/**
 * A graphql-ws connection opened by hand, below any client library: for the tests (and the
 * benchmark scripts) that need to see the frames as the service writes them, pause the socket's
 * reads, or count sockets. Opened, initialised with a bearer token and acknowledged in one place.
 */
import WebSocket from 'ws';

/** An acknowledged raw connection: the socket, and the frames received after the ack, as text (when kept). */
export interface RawSocket {
  readonly ws: WebSocket;
  /** Empty unless `keepFrames`: a test that measures the process's memory must not hold them. */
  readonly frames: string[];
}

/** Options of {@link rawSocketOrClose}. */
export interface RawSocketOptions {
  /** Keep every frame received after the ack in `frames`. */
  readonly keepFrames?: boolean;
}

/**
 * Opens `<url>/graphql` (an `http://` base) with graphql-ws's subprotocol and sends
 * `connection_init` with `bearer`: the connection once the service acknowledged it, or the close
 * code it got instead (a refused token). Rejects when another frame comes before the ack: that is
 * no answer graphql-ws allows, and a close code cannot stand for it.
 */
export async function rawSocketOrClose(url: string, bearer: string, options: RawSocketOptions = {}): Promise<RawSocket | number> {
  const ws = new WebSocket(`${url.replace(/^http/, 'ws')}/graphql`, 'graphql-transport-ws');
  await new Promise((resolve, reject) => (ws.once('open', resolve), ws.once('error', reject)));
  const answer = new Promise<RawSocket | number>((resolve, reject) => {
    ws.once('message', (data: Buffer) => {
      const first = data.toString();
      if (first !== '{"type":"connection_ack"}') {
        ws.terminate();
        reject(new Error(`the first frame was not the connection's ack: ${first.slice(0, 200)}`));
        return;
      }
      const frames: string[] = [];
      if (options.keepFrames === true) ws.on('message', (next: Buffer) => frames.push(next.toString()));
      resolve({ ws, frames });
    });
    ws.once('close', (code) => resolve(code));
  });
  ws.send(JSON.stringify({ type: 'connection_init', payload: { authorization: `Bearer ${bearer}` } }));
  return answer;
}

/** {@link rawSocketOrClose}, rejecting unless the service acknowledged the connection. */
export async function openRawSocket(url: string, bearer: string, options: RawSocketOptions = {}): Promise<RawSocket> {
  const answer = await rawSocketOrClose(url, bearer, options);
  if (typeof answer === 'number') throw new Error(`the graphql-ws connection was not acknowledged (closed ${answer})`);
  return answer;
}
