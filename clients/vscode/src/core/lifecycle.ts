/**
 * One daemon at a time. Starting, stopping and restarting run one after another, never
 * side by side: a restart asked for while another start is under way waits for it, stops
 * what it started and starts anew. Requests that arrive while one is already waiting join
 * that one (a settings change and a key change together, or Restart pressed twice, make one
 * restart, not two), so at most one is queued behind the one running.
 *
 * Pure (the launch is injected), so the ordering is unit-tested without VS Code.
 */

/** What a launch leaves running: something that can be stopped. */
export interface Running {
  stop(): Promise<void>;
}

export class Lifecycle<T extends Running> {
  private current: T | null = null;
  /** The last operation in line: the next one starts when it settles. */
  private tail: Promise<void> = Promise.resolve();
  /** A start that has not begun yet; later requests join it. */
  private waiting: Promise<void> | null = null;
  private disposed = false;

  /** `launch` starts one daemon. It hands what it started to `adopt` as soon as that exists
   * (before it is up, so a crash during start-up is noticed), and reports by itself why
   * nothing could be started. */
  constructor(private readonly launch: (adopt: (handle: T) => void) => Promise<void>) {}

  /** What runs now (null while nothing does, or while a launch is still under way). */
  get running(): T | null {
    return this.current;
  }

  /** Stop what runs (if anything) and start again, after whatever is under way. */
  restart(): Promise<void> {
    if (this.waiting) return this.waiting;
    const next = this.enqueue(async () => {
      this.waiting = null;
      await this.stopCurrent();
      if (this.disposed) return;
      await this.launch((handle) => {
        this.current = handle;
      });
      // Disposed while it started: nobody may keep it.
      if (this.disposed) await this.stopCurrent();
    });
    this.waiting = next;
    return next;
  }

  /** Resolves once every start, stop and restart asked for so far has finished. */
  settled(): Promise<void> {
    return this.tail;
  }

  /** Stop what runs, after whatever is under way; a restart queued behind it still runs. */
  stop(): Promise<void> {
    return this.enqueue(() => this.stopCurrent());
  }

  /** Stop for good: a queued restart does nothing, a launch under way is stopped. */
  dispose(): Promise<void> {
    this.disposed = true;
    return this.stop();
  }

  /** `handle` ended by itself (it crashed): forget it. False when it was not the current one
   * (already replaced, or stopped on purpose). */
  lost(handle: T): boolean {
    if (this.current !== handle) return false;
    this.current = null;
    return true;
  }

  private async stopCurrent(): Promise<void> {
    const current = this.current;
    this.current = null;
    await current?.stop();
  }

  private enqueue(op: () => Promise<void>): Promise<void> {
    // A failed operation does not block the ones behind it; its caller sees the error.
    const next = this.tail.then(op);
    this.tail = next.catch(() => undefined);
    return next;
  }
}
