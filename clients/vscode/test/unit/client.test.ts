/** The handlers the extension registers and the chat controller, against a fake connection. */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { ChatAction } from '../../src/core/chatState';
import { registerClientHandlers } from '../../src/core/handlers';
import { TetherApi } from '../../src/core/rpc';
import { ChatController } from '../../src/core/session';
import { PermissionOutcome, SessionUpdateParams } from '../../src/core/wire';
import { FakeRpc } from '../support/fakeRpc';

describe('client handlers', () => {
  it('passes well-formed session updates on and drops malformed ones', () => {
    const rpc = new FakeRpc();
    const seen: SessionUpdateParams[] = [];
    registerClientHandlers(rpc, { onSessionUpdate: (p) => seen.push(p), askPermission: async () => ({ outcome: { outcome: 'cancelled' } }), saveDocuments: async () => {} });
    rpc.notify('tether/sessionUpdate', { sessionId: 's', turnId: 't', update: { kind: 'agent_message_chunk', text: 'x' } });
    rpc.notify('tether/sessionUpdate', { sessionId: 's', update: 'nope' });
    rpc.notify('tether/sessionUpdate', null);
    assert.equal(seen.length, 1);
  });

  it('answers a permission request from the UI port, and a failing UI as cancelled', async () => {
    const rpc = new FakeRpc();
    let fail = false;
    registerClientHandlers(rpc, {
      onSessionUpdate: () => {},
      askPermission: async (p): Promise<PermissionOutcome> => {
        if (fail) throw new Error('dialog broke');
        return { outcome: { outcome: 'selected', optionId: p.options[0].optionId } };
      },
      saveDocuments: async () => {},
    });
    const params = { sessionId: 's', toolCall: { toolCallId: 'c', title: 'Edit', toolKind: 'edit', rawInput: {} }, options: [{ optionId: 'allow_once', name: 'Allow once', kind: 'allow_once' }] };
    assert.deepEqual(await rpc.request('tether/requestPermission', params), { outcome: { outcome: 'selected', optionId: 'allow_once' } });
    fail = true;
    assert.deepEqual(await rpc.request('tether/requestPermission', params), { outcome: { outcome: 'cancelled' } });
    assert.deepEqual(await rpc.request('tether/requestPermission', { bogus: true }), { outcome: { outcome: 'cancelled' } });
  });

  it('saves the documents named by saveDocuments and answers null', async () => {
    const rpc = new FakeRpc();
    const saved: string[][] = [];
    registerClientHandlers(rpc, { onSessionUpdate: () => {}, askPermission: async () => ({ outcome: { outcome: 'cancelled' } }), saveDocuments: async (u) => void saved.push(u) });
    assert.equal(await rpc.request('tether/saveDocuments', { uris: ['file:///a', 3] }), null);
    assert.deepEqual(saved, [['file:///a']]);
  });
});

describe('chat controller', () => {
  function setup() {
    const rpc = new FakeRpc();
    const actions: ChatAction[] = [];
    rpc.replies = {
      'tether/newSession': () => ({ sessionId: 'S1' }),
      'tether/prompt': () => new Promise((resolve) => setTimeout(() => resolve({ stopReason: 'end_turn', turnId: 'T', usage: {} }), 5)),
      'tether/cancel': () => null,
      'tether/setMode': () => null,
      'tether/rewind': () => ({ restored: ['file:///a'] }),
      'tether/loadSession': () => ({ sessionId: 'S0', history: [{ turnId: 'T0', kind: 'user_message', content: [{ type: 'text', text: 'old' }] }, { turnId: 'T0', kind: 'agent_message_chunk', text: 'reply' }] }),
      'tether/listSessions': () => ({ sessions: [] }),
    };
    const controller = new ChatController({ folders: () => [{ uri: 'file:///w', name: 'w' }], mode: 'acceptEdits', onAction: (a) => actions.push(a) });
    return { rpc, actions, controller };
  }

  it('creates a session on the first prompt with the chosen mode and folder', async () => {
    const { rpc, controller } = setup();
    await controller.attach(new TetherApi(rpc));
    const result = await controller.send([{ type: 'text', text: 'hi' }]);
    assert.equal(result?.stopReason, 'end_turn');
    assert.deepEqual(rpc.sent[0], { method: 'tether/newSession', params: { workspaceFolder: 'file:///w', permissionMode: 'acceptEdits' } });
    assert.deepEqual(rpc.sent[1], { method: 'tether/prompt', params: { sessionId: 'S1', prompt: [{ type: 'text', text: 'hi' }] } });
    assert.equal(controller.state.busy, false, 'a prompt that resolves without turn_end still clears busy');
  });

  it('only applies updates of its own session', async () => {
    const { rpc, controller } = setup();
    await controller.attach(new TetherApi(rpc));
    await controller.newSession();
    controller.onSessionUpdate({ sessionId: 'other', turnId: 't', update: { kind: 'agent_message_chunk', text: 'x' } });
    controller.onSessionUpdate({ sessionId: 'S1', turnId: 't', update: { kind: 'agent_message_chunk', text: 'mine' } });
    assert.equal(controller.state.items.length, 1);
  });

  it('stop, mode and rewind go to the daemon for the active session', async () => {
    const { rpc, controller, actions } = setup();
    await controller.attach(new TetherApi(rpc));
    await controller.newSession();
    await controller.stop();
    await controller.setMode('plan');
    assert.deepEqual(await controller.rewind('T'), ['file:///a']);
    assert.deepEqual(rpc.sent.slice(1).map((s) => s.method), ['tether/cancel', 'tether/setMode', 'tether/rewind']);
    assert.equal(controller.state.mode, 'plan');
    assert.ok(actions.some((a) => a.type === 'rewound' && a.turnId === 'T'));
  });

  it('resumes a session from its history, keeps the mode, and reloads it after a restart', async () => {
    const { rpc, controller } = setup();
    await controller.attach(new TetherApi(rpc));
    await controller.loadSession('S0');
    assert.deepEqual(controller.state.items.map((i) => i.kind), ['user', 'agent']);
    assert.equal(controller.state.busy, false);
    assert.deepEqual(rpc.sent.at(-1), { method: 'tether/setMode', params: { sessionId: 'S0', mode: 'acceptEdits' } }, 'a daemon that does not say the mode');
    controller.detach();
    const before = rpc.sent.length;
    await controller.attach(new TetherApi(rpc));
    assert.equal(rpc.sent[before].method, 'tether/loadSession', 'the new daemon resumes the session from disk');
  });

  it('a resumed or reloaded session shows the mode it was left in and sets none: only the user sets a mode', async () => {
    const { rpc, controller, actions } = setup();
    const history = [{ turnId: 'T0', kind: 'user_message', content: [{ type: 'text', text: 'old' }] }];
    rpc.replies['tether/loadSession'] = (params) => ({ sessionId: (params as { sessionId: string }).sessionId, history, mode: (params as { sessionId: string }).sessionId === 'P' ? 'plan' : 'bypassPermissions' });
    await controller.attach(new TetherApi(rpc), 'P'); // a window reload, back to session P
    assert.equal(controller.state.mode, 'plan', 'not the window\'s acceptEdits');
    await controller.loadSession('B');
    assert.equal(controller.state.mode, 'bypassPermissions');
    const reset = actions.filter((a) => a.type === 'reset').at(-1);
    assert.equal(reset?.type === 'reset' && reset.state.mode, 'bypassPermissions', 'the webview shows it too');
    controller.detach();
    await controller.attach(new TetherApi(rpc)); // the daemon restarted
    assert.deepEqual(rpc.sent.filter((m) => m.method === 'tether/setMode'), [], 'no mode pushed on load');
    await controller.setMode('default');
    assert.deepEqual(rpc.sent.at(-1), { method: 'tether/setMode', params: { sessionId: 'B', mode: 'default' } });
  });

  it('reports a failed request as a notice and is not left busy', async () => {
    const { rpc, controller } = setup();
    rpc.replies['tether/prompt'] = () => {
      throw new Error('boom');
    };
    await controller.attach(new TetherApi(rpc));
    assert.equal(await controller.send([{ type: 'text', text: 'x' }]), undefined);
    const last = controller.state.items.at(-1);
    assert.equal(last?.kind === 'notice' && last.message, 'The prompt failed: boom');
    assert.equal(controller.state.busy, false);
  });

  it('without a daemon, a prompt explains why it was not sent; a running turn is closed on detach', async () => {
    const { controller, rpc } = setup();
    assert.equal(await controller.send([{ type: 'text', text: 'x' }]), undefined);
    assert.match(JSON.stringify(controller.state.items.at(-1)), /The prompt failed: The Tether daemon is not running/);
    await controller.attach(new TetherApi(rpc));
    await controller.newSession();
    controller.dispatch({ type: 'busy', busy: true });
    controller.detach();
    assert.equal(controller.state.busy, false);
    assert.match(JSON.stringify(controller.state.items.at(-1)), /stopped during the turn/);
  });

  it('restores the session a reloaded window had open, with title, usage totals and what can be undone', async () => {
    const { rpc, controller } = setup();
    rpc.replies['tether/loadSession'] = () => ({
      sessionId: 'S0',
      title: 'Fix mean()',
      turns: 1,
      usage: { inputTokens: 1000, outputTokens: 200, cacheReadTokens: 300, cacheCreationTokens: 0, costUsd: 0.42 },
      rewindableTurns: ['T0'],
      history: [
        { turnId: 'T0', kind: 'user_message', content: [{ type: 'text', text: 'Fix mean()' }] },
        { turnId: 'T0', kind: 'usage', inputTokens: 10, outputTokens: 2, cacheReadTokens: 0, cacheCreationTokens: 0, costUsd: 0.01, contextTokens: 12, contextWindow: 1000 },
        { turnId: 'T0', kind: 'turn_end', stopReason: 'end_turn' },
      ],
    });
    const loaded: string[] = [];
    const remembered: (string | null)[] = [];
    const c = new ChatController({ folders: () => [{ uri: 'file:///w', name: 'w' }], mode: 'default', onAction: () => {}, onLoaded: (l) => loaded.push(l.sessionId), onSessionChanged: (id) => remembered.push(id) });
    void controller;
    await c.attach(new TetherApi(rpc), 'S0');
    assert.equal(c.state.sessionId, 'S0');
    assert.equal(c.state.title, 'Fix mean()');
    assert.deepEqual(c.state.rewindable, ['T0']);
    assert.equal(c.state.usage.sessionCostUsd, 0.42, 'the cost does not start over on resume');
    assert.equal(c.state.usage.sessionTokens, 1500);
    assert.equal(c.state.usage.contextTokens, 12, 'the meter shows the last context');
    assert.deepEqual(loaded, ['S0']);
    assert.deepEqual(remembered, ['S0']);
  });

  it('a remembered session that is gone is forgotten, not an error', async () => {
    const { rpc } = setup();
    rpc.replies['tether/loadSession'] = () => {
      throw new Error('unknown sessionId');
    };
    const remembered: (string | null)[] = [];
    const c = new ChatController({ folders: () => [], mode: 'default', onAction: () => {}, onSessionChanged: (id) => remembered.push(id) });
    await c.attach(new TetherApi(rpc), 'gone');
    assert.equal(c.state.sessionId, null);
    assert.deepEqual(remembered, [null]);
  });

  it('in a multi-root window lists each folder\'s sessions and starts sessions in the chosen folder', async () => {
    const { rpc } = setup();
    const folders = [{ uri: 'file:///a', name: 'a' }, { uri: 'file:///b', name: 'b' }];
    rpc.replies['tether/listSessions'] = (p) => {
      const folder = (p as { workspaceFolder: string }).workspaceFolder;
      return { sessions: [{ sessionId: `in-${folder.slice(-1)}`, title: folder, workspaceFolder: folder, createdAt: '', updatedAt: '', turns: 1 }] };
    };
    let active: string | undefined = 'file:///b';
    const c = new ChatController({ folders: () => folders, preferredFolder: () => active, mode: 'default', onAction: () => {} });
    await c.attach(new TetherApi(rpc));
    const groups = await c.listSessions();
    assert.deepEqual(groups.map((g) => [g.folder.name, g.sessions.map((s) => s.sessionId)]), [['a', ['in-a']], ['b', ['in-b']]]);
    await c.newSession();
    assert.deepEqual(rpc.sent.at(-1)?.params, { workspaceFolder: 'file:///b', permissionMode: 'default' }, 'the active editor\'s folder');
    assert.equal(c.state.folder?.name, 'b');
    active = undefined;
    await c.newSession('file:///a');
    assert.deepEqual(rpc.sent.at(-1)?.params, { workspaceFolder: 'file:///a', permissionMode: 'default' });
    await c.loadSession('in-b');
    assert.equal(c.state.folder?.name, 'b', 'a resumed session knows its folder');
  });

  it('a prompt sent during a turn shows as queued until the daemon takes it in', async () => {
    const { rpc, controller } = setup();
    let finish: (r: unknown) => void = () => {};
    rpc.replies['tether/prompt'] = () => new Promise((resolve) => (finish = resolve));
    await controller.attach(new TetherApi(rpc));
    const first = controller.send([{ type: 'text', text: 'first' }]);
    await new Promise((r) => setTimeout(r, 0));
    controller.onSessionUpdate({ sessionId: 'S1', turnId: 'T', update: { kind: 'user_message', content: [{ type: 'text', text: 'first' }] } });
    const finishFirst = finish;
    const second = controller.send([{ type: 'text', text: 'also this' }]);
    await new Promise((r) => setTimeout(r, 0));
    assert.deepEqual(controller.state.queued.map((q) => q.text), ['also this']);
    controller.onSessionUpdate({ sessionId: 'S1', turnId: 'T', update: { kind: 'user_message', content: [{ type: 'text', text: 'also this' }] } });
    assert.deepEqual(controller.state.queued, [], 'taken in at the next step');
    controller.onSessionUpdate({ sessionId: 'S1', turnId: 'T', update: { kind: 'turn_end', stopReason: 'end_turn' } });
    finishFirst({ stopReason: 'end_turn', turnId: 'T', usage: {} });
    finish({ stopReason: 'end_turn', turnId: 'T', usage: {} });
    await Promise.all([first, second]);
    assert.equal(rpc.sent.filter((s) => s.method === 'tether/prompt').length, 2, 'nothing sent twice');
  });

  it('a queued prompt the turn ended without reading is sent again as a turn of its own', async () => {
    const { rpc, controller } = setup();
    const resolvers: ((r: unknown) => void)[] = [];
    rpc.replies['tether/prompt'] = () => new Promise((resolve) => resolvers.push(resolve));
    await controller.attach(new TetherApi(rpc));
    const first = controller.send([{ type: 'text', text: 'first' }]);
    await new Promise((r) => setTimeout(r, 0));
    const late = controller.send([{ type: 'text', text: 'too late' }]);
    await new Promise((r) => setTimeout(r, 0));
    assert.equal(controller.state.queued.length, 1);
    controller.onSessionUpdate({ sessionId: 'S1', turnId: 'T', update: { kind: 'turn_end', stopReason: 'end_turn' } });
    resolvers[0]({ stopReason: 'end_turn', turnId: 'T', usage: {} });
    resolvers[1]({ stopReason: 'end_turn', turnId: 'T', usage: {} }); // given back unread
    await first;
    await new Promise((r) => setTimeout(r, 0));
    const prompts = rpc.sent.filter((s) => s.method === 'tether/prompt');
    assert.equal(prompts.length, 3);
    assert.deepEqual((prompts[2].params as { prompt: unknown }).prompt, [{ type: 'text', text: 'too late' }]);
    assert.deepEqual(controller.state.queued, []);
    assert.equal(controller.state.busy, true, 'its own turn runs');
    resolvers[2]({ stopReason: 'end_turn', turnId: 'T2', usage: {} });
    await late;
    assert.equal(controller.state.busy, false);
  });
});