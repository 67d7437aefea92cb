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
    const controller = new ChatController({ workspaceFolder: 'file:///w', mode: 'acceptEdits', onAction: (a) => actions.push(a) });
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
    assert.deepEqual(rpc.sent.at(-1), { method: 'tether/setMode', params: { sessionId: 'S0', mode: 'acceptEdits' } });
    controller.detach();
    const before = rpc.sent.length;
    await controller.attach(new TetherApi(rpc));
    assert.equal(rpc.sent[before].method, 'tether/loadSession', 'the new daemon resumes the session from disk');
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
});
