/**
 * The real daemon driven through the extension's client code (vscode-jsonrpc over stdio):
 * streaming into the chat state, permission answers, edits as applyEdit followed by
 * saveDocuments, cancel, rewind, sessions and diagnostics.
 */
import assert from 'node:assert/strict';
import * as fs from 'fs';
import * as path from 'path';
import { after, describe, it } from 'node:test';
import { pathToFileURL } from 'url';
import { ChatItem, ToolCard } from '../../src/core/chatState';
import { Harness, startHarness } from '../support/daemon';

const FIX = { file_path: 'calc/ops.py', old_string: '    return sum(values) / (len(values) + 1)', new_string: '    return sum(values) / len(values)' };
const READ = [{ type: 'tool_use', name: 'Read', input: { file_path: 'calc/ops.py' } }];
const harnesses: Harness[] = [];

async function start(script: unknown[], mode?: 'default' | 'bypassPermissions'): Promise<Harness> {
  const h = await startHarness({ script, mode });
  harnesses.push(h);
  return h;
}

after(async () => {
  await Promise.all(harnesses.map((h) => h.stop()));
});

function items<K extends ChatItem['kind']>(h: Harness, kind: K): Extract<ChatItem, { kind: K }>[] {
  return h.controller.state.items.filter((i): i is Extract<ChatItem, { kind: K }> => i.kind === kind);
}

describe('a turn against the real daemon', () => {
  it('declares the Tether capabilities and accepts the daemon protocol version', async () => {
    const h = await start([]);
    assert.ok(h.check.ok && h.check.protocolVersion === 1);
    assert.match(h.check.ok ? h.check.facts.model ?? '' : '', /^scripted:/, 'the daemon says which model it runs');
  });

  it('streams agent text and tool cards into the chat state', async () => {
    const h = await start([
      [{ type: 'text', text: 'Let me read the **calculator** module first, then I will explain it.' }, { type: 'tool_use', name: 'Read', input: { file_path: 'calc/ops.py' } }],
      [{ type: 'text', text: '`mean()` divides by the wrong count.' }],
    ]);
    const result = await h.controller.send([{ type: 'text', text: 'What is wrong with mean?' }]);
    assert.equal(result?.stopReason, 'end_turn');
    const chunks = h.updates.filter((u) => u.update.kind === 'agent_message_chunk');
    assert.ok(chunks.length >= 3, `text arrives in chunks (got ${chunks.length})`);
    const state = h.controller.state;
    assert.equal(state.busy, false);
    assert.deepEqual(state.items.map((i) => i.kind), ['user', 'agent', 'tool', 'agent', 'turn_end']);
    assert.match(items(h, 'agent')[0].text, /Let me read the \*\*calculator\*\* module first/);
    const card = items(h, 'tool')[0] as ToolCard;
    assert.equal(card.title, 'Read calc/ops.py');
    assert.equal(card.status, 'completed');
    assert.equal(state.usage.turnInputTokens, 0, 'folded into the session total at turn end');
    assert.ok(state.usage.sessionTokens > 0);
    assert.equal(state.usage.contextWindow, 200000);
    // The host forwards each change as an action; replaying them gives the same state.
    assert.ok(h.actions.some((a) => a.type === 'update' && a.update.kind === 'agent_message_chunk'));
  });

  it('answers a permission question, then the edit arrives as applyEdit and saveDocuments follows', async () => {
    const h = await start([
      READ,
      [{ type: 'tool_use', name: 'Edit', input: FIX }],
      [{ type: 'text', text: 'Fixed.' }],
    ]);
    const session = await h.controller.newSession();
    const file = path.join(h.workspace, 'calc/ops.py');
    const uri = h.files.open(file);
    const result = await h.controller.send([{ type: 'text', text: 'fix mean' }]);
    assert.equal(result?.stopReason, 'end_turn');

    assert.equal(h.permissions.length, 1);
    const asked = h.permissions[0];
    assert.equal(asked.sessionId, session);
    assert.equal(asked.toolCall.title, 'Edit calc/ops.py');
    assert.ok(asked.toolCall.content?.some((c) => c.type === 'diff'), 'the question carries the proposed diff');
    assert.deepEqual(h.files.events, [`applyEdit ${uri}`, `save ${uri}`], 'edit then save');
    assert.match(fs.readFileSync(file, 'utf8'), /return sum\(values\) \/ len\(values\)\n/);
    assert.equal(h.files.text(uri), fs.readFileSync(file, 'utf8'), 'buffer and disk agree');

    const card = items(h, 'tool')[1];
    assert.equal(card.title, 'Edit calc/ops.py');
    assert.equal(card.status, 'completed');
    assert.equal(card.question, undefined);
    assert.deepEqual(card.answered, { label: 'Allow once', optionId: asked.options.find((o) => o.kind === 'allow_once')!.optionId });
    assert.ok(h.actions.some((a) => a.type === 'question' && a.question?.hasDiff), 'the card showed the pending question');

    const [turn] = h.tracker.list(session);
    assert.equal(turn.prompt, 'fix mean');
    assert.equal(turn.files.length, 1);
    assert.match(turn.files[0].before ?? '', /\(len\(values\) \+ 1\)/);
    assert.match(turn.files[0].after, /len\(values\)\n/);
  });

  it('a rejected permission leaves the file alone and fails the card', async () => {
    const h = await start([
      READ,
      [{ type: 'tool_use', name: 'Edit', input: FIX }],
      [{ type: 'text', text: 'Understood, not changing it.' }],
    ]);
    h.answer = () => 'reject_once';
    const file = path.join(h.workspace, 'calc/ops.py');
    const before = fs.readFileSync(file, 'utf8');
    const result = await h.controller.send([{ type: 'text', text: 'fix mean' }]);
    assert.equal(result?.stopReason, 'end_turn');
    assert.equal(fs.readFileSync(file, 'utf8'), before);
    assert.deepEqual(h.files.events, []);
    assert.equal(items(h, 'tool')[1].status, 'failed');
  });

  it('stop cancels a long turn and the session stays usable', async () => {
    const h = await start([
      { chunk_delay_ms: 100, blocks: [{ type: 'text', text: 'slowly '.repeat(80) }] },
      [{ type: 'text', text: 'Back again.' }],
    ]);
    const pending = h.controller.send([{ type: 'text', text: 'talk slowly' }]);
    await h.waitFor(() => items(h, 'agent').length > 0, 'the first text chunk');
    assert.equal(h.controller.state.busy, true);
    const started = Date.now();
    await h.controller.stop();
    const result = await pending;
    assert.equal(result?.stopReason, 'cancelled');
    assert.ok(Date.now() - started < 5000, 'cancel is prompt');
    const end = items(h, 'turn_end').at(-1);
    assert.equal(end?.stopReason, 'cancelled');
    assert.equal(h.controller.state.busy, false);

    const again = await h.controller.send([{ type: 'text', text: 'again' }]);
    assert.equal(again?.stopReason, 'end_turn');
    assert.equal(items(h, 'agent').at(-1)?.text, 'Back again.');
  });

  it('rewind puts the files back through applyEdit and drops the turn', async () => {
    const h = await start([
      READ,
      [{ type: 'tool_use', name: 'Edit', input: FIX }],
      [{ type: 'text', text: 'Fixed.' }],
    ], 'bypassPermissions');
    const file = path.join(h.workspace, 'calc/ops.py');
    const original = fs.readFileSync(file, 'utf8');
    const uri = h.files.open(file);
    const result = await h.controller.send([{ type: 'text', text: 'fix mean' }]);
    assert.notEqual(fs.readFileSync(file, 'utf8'), original);
    assert.deepEqual(h.controller.state.rewindable, [result!.turnId]);

    const restored = await h.controller.rewind(result!.turnId);
    assert.deepEqual(restored, [pathToFileURL(file).toString()]);
    assert.equal(fs.readFileSync(file, 'utf8'), original);
    assert.equal(h.files.text(uri), original);
    assert.deepEqual(h.files.events.slice(-2), [`applyEdit ${uri}`, `save ${uri}`]);
    assert.deepEqual(h.controller.state.items, []);
    assert.deepEqual(h.controller.state.rewindable, []);
  });
});
