/**
 * When to restart a daemon that exited: exponential backoff, reset once a run has been
 * stable, and give up after a burst of quick crashes (a daemon that dies on start-up would
 * otherwise be respawned forever).
 */
export interface BackoffOptions {
  initialMs: number;
  maxMs: number;
  /** A run this long counts as healthy: the next crash starts the backoff over. */
  stableMs: number;
  /** Consecutive unstable crashes before giving up. */
  maxAttempts: number;
}

export const DEFAULT_BACKOFF: BackoffOptions = { initialMs: 1000, maxMs: 30_000, stableMs: 60_000, maxAttempts: 6 };

export class RestartPolicy {
  private attempts = 0;
  private startedAt: number | null = null;

  constructor(private readonly options: BackoffOptions = DEFAULT_BACKOFF) {}

  started(now: number): void {
    this.startedAt = now;
  }

  /** The daemon exited unexpectedly: milliseconds to wait before restarting, or null to stop. */
  crashed(now: number): number | null {
    if (this.startedAt !== null && now - this.startedAt >= this.options.stableMs) this.attempts = 0;
    this.startedAt = null;
    if (this.attempts >= this.options.maxAttempts) return null;
    const delay = Math.min(this.options.maxMs, this.options.initialMs * 2 ** this.attempts);
    this.attempts++;
    return delay;
  }

  /** The user asked for a restart: start counting afresh. */
  reset(): void {
    this.attempts = 0;
  }
}
