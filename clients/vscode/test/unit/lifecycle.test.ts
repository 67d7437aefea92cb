/** Starts, stops and restarts of the daemon run one at a time (`core/lifecycle.ts`). */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { Lifecycle, Running } from '../../src/core/lifecycle';

/** A launch whose start-up waits for the test (as a real one awaits the environment and the
 * process), recording every client it makes and which of them still run. */
class Launches {
  readonly clients: { id: number; running: boolean }[] = [];
  private readonly gates: (() => void)[] = [];
  failNext = false;

  launch = async (adopt: (handle: Running) => void): Promise<void> => {
    // The environment (the API key from secret storage) is awaited before the client exists.
    await new Promise<void>((resolve) => this.gates.push(resolve));
    if (this.failNext) {
      this.failNext = false;
      throw new Error('spawn failed');
    }
    const client = { id: this.clients.length + 1, running: true };
    this.clients.push(client);
    adopt({
      stop: async () => {
        await Promise.resolve();
        client.running = false;
      },
    });
  };

  /** Let the launches waiting now go on, and everything they set off settle. */
  async release(): Promise<void> {
    for (let i = 0; i < 20; i++) {
      this.gates.splice(0).forEach((open) => open());
      await new Promise((r) => setImmediate(r));
    }
  }

  get running(): number[] {
    return this.clients.filter((c) => c.running).map((c) => c.id);
  }
}

describe('daemon lifecycle', () => {
  it('two overlapping restarts leave one client', async () => {
    const l = new Launches();
    const lifecycle = new Lifecycle(l.launch);
    const first = lifecycle.restart(); // a settings change…
    const second = lifecycle.restart(); // …and a key change, while the first still starts
    await l.release();
    await Promise.all([first, second]);
    assert.equal(l.running.length, 1, `running: ${l.running}`);
    assert.ok(lifecycle.running, 'the one left is the current one');
  });

  it('a restart asked for during a start waits for it, stops it, and starts once more; more requests join the one waiting', async () => {
    const l = new Launches();
    const lifecycle = new Lifecycle(l.launch);
    const initial = lifecycle.restart();
    await new Promise((r) => setImmediate(r)); // the initial start is under way
    const restarts = [lifecycle.restart(), lifecycle.restart(), lifecycle.restart()];
    assert.equal(restarts[0], restarts[2], 'at most one restart is queued');
    await l.release();
    await Promise.all([initial, ...restarts]);
    assert.equal(l.clients.length, 2, 'the first start and one restart');
    assert.deepEqual(l.running, [2]);
  });

  it('a failed launch does not block the restart behind it', async () => {
    const l = new Launches();
    const lifecycle = new Lifecycle(l.launch);
    l.failNext = true;
    const failed = lifecycle.restart();
    const again = (async () => {
      await new Promise((r) => setImmediate(r));
      return lifecycle.restart();
    })();
    await l.release();
    await assert.rejects(failed, /spawn failed/);
    await again;
    assert.deepEqual(l.running, [1]);
  });

  it('dispose during a start stops what that start made; nothing starts after it', async () => {
    const l = new Launches();
    const lifecycle = new Lifecycle(l.launch);
    const starting = lifecycle.restart();
    await new Promise((r) => setImmediate(r));
    const disposed = lifecycle.dispose();
    const late = lifecycle.restart();
    await l.release();
    await Promise.all([starting, disposed, late]);
    assert.deepEqual(l.running, []);
    assert.equal(l.clients.length, 1);
    assert.equal(lifecycle.running, null);
  });

  it('a crash is forgotten only for the current client', async () => {
    const l = new Launches();
    const handles: Running[] = [];
    const lifecycle = new Lifecycle<Running>((adopt) => l.launch((h) => (handles.push(h), adopt(h))));
    const a = lifecycle.restart();
    await l.release();
    await a;
    const b = lifecycle.restart();
    await l.release();
    await b;
    assert.equal(lifecycle.lost(handles[0]), false, 'the replaced one');
    assert.equal(lifecycle.lost(handles[1]), true);
    assert.equal(lifecycle.lost(handles[1]), false, 'once');
  });
});
