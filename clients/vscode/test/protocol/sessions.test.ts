/** Sessions through the extension's controller: list, resume, resume after a daemon restart. */
import assert from 'node:assert/strict';
import { after, describe, it } from 'node:test';
import { pathToFileURL } from 'url';
import { ChatController } from '../../src/core/session';
import { toolCardView } from '../../src/core/toolView';
import { ChangeTracker } from '../../src/core/turns';
import { Harness, startHarness } from '../support/daemon';

const harnesses: Harness[] = [];
after(async () => {
  await Promise.all(harnesses.map((h) => h.stop()));
});

const SCRIPT = [
  [{ type: 'text', text: 'Reading it.' }, { type: 'tool_use', name: 'Read', input: { file_path: 'calc/ops.py' } }],
  [{ type: 'text', text: 'It divides by n + 1.' }],
];

describe('sessions', () => {
  it('lists sessions and resumes one into the same chat state', async () => {
    const h = await startHarness({ script: SCRIPT });
    harnesses.push(h);
    await h.controller.send([{ type: 'text', text: 'explain mean' }]);
    const live = h.controller.state;

    const [group] = await h.controller.listSessions();
    const sessions = group.sessions;
    assert.equal(group.folder.name, 'ws');
    assert.equal(sessions.length, 1);
    assert.equal(sessions[0].sessionId, live.sessionId);
    assert.equal(sessions[0].title, 'explain mean');
    assert.equal(sessions[0].turns, 1);

    const other = new ChatController({ folders: () => [group.folder], mode: 'default', onAction: () => undefined });
    await other.attach(h.api);
    await other.loadSession(live.sessionId!);
    const kinds = (s: typeof live) => s.items.map((i) => (i.kind === 'tool' ? `tool:${i.status}` : i.kind));
    assert.deepEqual(kinds(other.state), kinds(live));
    assert.deepEqual(other.state.rewindable, live.rewindable, 'the daemon keeps the checkpoints: resumed turns can be undone');
    const agentText = other.state.items.filter((i) => i.kind === 'agent').map((i) => (i.kind === 'agent' ? i.text : ''));
    assert.deepEqual(agentText, ['Reading it.', 'It divides by n + 1.']);
  });

  it('a resumed session shows its diffs, exit codes and usage, and its Changes come back', async () => {
    const h = await startHarness({
      script: [
        [{ type: 'tool_use', name: 'Bash', input: { command: 'echo checked; exit 2', description: 'Check' } }],
        [{ type: 'tool_use', name: 'Read', input: { file_path: 'calc/ops.py' } }],
        [{ type: 'tool_use', name: 'Edit', input: { file_path: 'calc/ops.py', old_string: '    return sum(values) / (len(values) + 1)', new_string: '    return sum(values) / len(values)' } }],
        [{ type: 'text', text: 'Done.' }],
      ],
      mode: 'bypassPermissions',
    });
    harnesses.push(h);
    await h.controller.send([{ type: 'text', text: 'fix it' }]);
    const sessionId = h.controller.sessionId!;
    const loaded: string[] = [];
    const tracker = new ChangeTracker();
    const other = new ChatController({
      folders: () => [{ uri: pathToFileURL(h.workspace).toString(), name: 'ws' }],
      mode: 'default',
      onAction: () => undefined,
      onLoaded: (l) => {
        loaded.push(l.sessionId);
        tracker.load(l.sessionId, l.history, l.rewindableTurns);
      },
    });
    await other.attach(h.api, sessionId);
    const cards = other.state.items.filter((i) => i.kind === 'tool').map((i) => (i.kind === 'tool' ? toolCardView(i) : null));
    const bash = cards.find((c) => c?.command !== undefined);
    assert.equal(bash?.exitCode, 2, JSON.stringify(other.state.items));
    assert.equal(bash?.title, 'Check', 'the title the live card had');
    assert.match(bash?.output ?? '', /checked/);
    const edit = cards.find((c) => c && c.diffs.length > 0);
    assert.deepEqual(edit?.diffs.map((d) => [d.name, d.added, d.removed]), [['ops.py', 1, 1]]);
    assert.ok(other.state.usage.contextTokens > 0, 'the meter shows the context again');
    assert.ok(other.state.usage.sessionTokens > 0);
    assert.deepEqual(loaded, [sessionId]);
    const [turn] = tracker.list(sessionId);
    assert.equal(turn.prompt, 'fix it');
    assert.equal(turn.rewindable, true, 'its checkpoint is on disk');
    assert.match(turn.files[0].after, /return sum\(values\) \/ len\(values\)\n/);
  });

  it('after a daemon restart the controller resumes the active session from disk', async () => {
    const first = await startHarness({ script: SCRIPT });
    harnesses.push(first);
    await first.controller.send([{ type: 'text', text: 'explain mean' }]);
    const sessionId = first.controller.sessionId!;
    const itemsBefore = first.controller.state.items.length;
    await first.stop();

    // The same data folder, a new process: what the extension sees after a crash and restart.
    const second = await startHarness({ script: [[{ type: 'text', text: 'Still here.' }]], root: first.root });
    harnesses.push(second);
    const controller = first.controller;
    controller.detach();
    await controller.attach(second.api);
    assert.equal(controller.sessionId, sessionId);
    assert.equal(controller.state.items.length, itemsBefore);
    // Updates of the resumed session now flow from the new daemon into the same controller.
    second.conn.onNotification('tether/sessionUpdate', (params) => controller.onSessionUpdate(params as never));
    const result = await controller.send([{ type: 'text', text: 'and now?' }]);
    assert.equal(result?.stopReason, 'end_turn', JSON.stringify(controller.state.items.at(-1)) + second.stderr());
    const last = controller.state.items.filter((i) => i.kind === 'agent').at(-1);
    assert.equal(last?.kind === 'agent' && last.text, 'Still here.');
  });
});
