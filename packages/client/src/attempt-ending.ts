/**
 * What both transports' attempts share around their client: ending once (the first of the
 * server's answer, a failure, or the dead-stream watchdog), telling the sink how, and shutting the
 * client; each result turned into a push, or into the end its errors make.
 */
import { readResult, type Attempt, type AttemptEnd, type AttemptRequest, type AttemptSink, type ServiceErrorShape } from './attempt.js';
import { createWatchdog, type Watchdog } from './watchdog.js';

/** An attempt's ending. */
export interface AttemptEnding {
  /** Arms the watchdog; `shut` closes the client. Called once the client exists, so the watchdog never fires before it. */
  start(shut: () => void): void;
  /** A sign of life: the watchdog waits again. */
  touch(): void;
  /** Ends the attempt with `how` (once; later calls do nothing). */
  end(how: AttemptEnd): void;
  /** One result of the subscription: a push, or the end its errors make. */
  result(result: unknown): void;
  /** The attempt handed to `follow`: closing it reports nothing. */
  readonly attempt: Attempt;
}

/** The ending of one attempt at `request`, reporting to `sink`. */
export function createAttemptEnding(request: AttemptRequest, sink: AttemptSink): AttemptEnding {
  let ended = false;
  let watchdog: Watchdog | undefined;
  let shut = () => undefined as void;
  const end = (how: AttemptEnd) => {
    if (ended) return;
    ended = true;
    watchdog?.stop();
    sink.end(how);
    shut();
  };
  return {
    start: (close) => {
      shut = close;
      watchdog = createWatchdog(request.deadAfterMs, () => end({ kind: 'dead', afterMs: request.deadAfterMs }));
    },
    touch: () => watchdog?.touch(),
    end,
    result: (result) => {
      if (ended) return;
      const read = readResult(result as Parameters<typeof readResult>[0]);
      if ('message' in read) sink.push(read);
      else end({ kind: 'errors', errors: read as readonly ServiceErrorShape[] });
    },
    attempt: {
      close: () => {
        ended = true;
        watchdog?.stop();
        shut();
      },
    },
  };
}
