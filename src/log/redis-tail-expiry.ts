/**
 * Finding the followed tests that expired in Redis, which says nothing when keys expire: every
 * `everyMs` each followed test is asked for (one EXISTS per test, through `exists`); a test that is
 * gone is handed to `gone`. A check that fails is no answer (tried again next time), and a check
 * still under way when the next is due is not doubled.
 */

/** Options of {@link startExpiryChecks}. */
export interface ExpiryChecksOptions {
  readonly everyMs: number;
  /** The tests followed now. */
  readonly followed: () => readonly string[];
  readonly exists: (correlationId: string) => Promise<boolean>;
  /** A followed test that is no longer stored (it may have stopped being followed meanwhile: check). */
  readonly gone: (correlationId: string) => void;
}

/** Starts the checks; returns their stop. */
export function startExpiryChecks(options: ExpiryChecksOptions): () => void {
  let checking = false;
  const check = async () => {
    if (checking) return;
    checking = true;
    try {
      const followed = options.followed();
      const stored = await Promise.all(followed.map((id) => options.exists(id).catch(() => true)));
      followed.forEach((id, i) => {
        if (!stored[i]) options.gone(id);
      });
    } finally {
      checking = false;
    }
  };
  const timer = setInterval(() => void check(), options.everyMs);
  timer.unref();
  return () => clearInterval(timer);
}
