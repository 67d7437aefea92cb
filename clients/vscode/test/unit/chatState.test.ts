import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { ChatAction, ChatState, ToolCard, emptyState, reduce, savedElsewhere, savingCall } from '../../src/core/chatState';
import { toolCardView } from '../../src/core/toolView';
import { SessionUpdate } from '../../src/core/wire';

function run(updates: [string, SessionUpdate][], live = true, state: ChatState = emptyState('s1')): ChatState {
  for (const [turnId, update] of updates) reduce(state, { type: 'update', turnId, update, live });
  return state;
}

const toolCall = (id: string, title = 'Read a.py'): SessionUpdate => ({ kind: 'tool_call', toolCallId: id, title, toolKind: 'read', status: 'pending', rawInput: { file_path: 'a.py' } });

describe('chat state reducer', () => {
  it('joins streamed chunks into one agent message per run of text', () => {
    const s = run([
      ['t1', { kind: 'user_message', content: [{ type: 'text', text: 'hi' }] }],
      ['t1', { kind: 'agent_message_chunk', text: 'Hel' }],
      ['t1', { kind: 'agent_message_chunk', text: 'lo **wor' }],
      ['t1', { kind: 'agent_message_chunk', text: 'ld**' }],
      ['t1', toolCall('c1')],
      ['t1', { kind: 'agent_message_chunk', text: 'After.' }],
    ]);
    assert.deepEqual(s.items.map((i) => i.kind), ['user', 'agent', 'tool', 'agent']);
    const first = s.items[1];
    assert.equal(first.kind === 'agent' && first.text, 'Hello **world**');
    assert.equal(first.rev, 3, 'rev bumps on every change so the view re-renders');
  });

  it('keeps thoughts apart from the answer', () => {
    const s = run([
      ['t1', { kind: 'agent_thought_chunk', text: 'hmm' }],
      ['t1', { kind: 'agent_thought_chunk', text: ' ok' }],
      ['t1', { kind: 'agent_message_chunk', text: 'Answer' }],
    ]);
    assert.deepEqual(s.items.map((i) => [i.kind, 'text' in i ? i.text : '']), [['thought', 'hmm ok'], ['agent', 'Answer']]);
  });

  it('moves a tool card pending → running → done and tracks the running tool', () => {
    const s = run([['t1', toolCall('c1')], ['t1', { kind: 'tool_call_update', toolCallId: 'c1', status: 'in_progress' }]]);
    assert.equal(s.currentTool, 'Read a.py');
    run([['t1', { kind: 'tool_call_update', toolCallId: 'c1', status: 'completed', content: [{ type: 'text', text: 'body' }] }]], true, s);
    const card = s.items[0];
    assert.ok(card.kind === 'tool');
    assert.equal(card.status, 'completed');
    assert.deepEqual(card.content, [{ type: 'text', text: 'body' }]);
    assert.equal(s.currentTool, null);
  });

  it('replaces tool content rather than appending (the daemon sends it whole)', () => {
    const s = run([
      ['t1', { ...toolCall('b'), toolKind: 'execute', title: 'ls' } as SessionUpdate],
      ['t1', { kind: 'tool_call_update', toolCallId: 'b', content: [{ type: 'terminal', output: 'a\n' }] }],
      ['t1', { kind: 'tool_call_update', toolCallId: 'b', status: 'completed', content: [{ type: 'terminal', output: 'a\nb\n', exitCode: 0 }] }],
    ]);
    const card = s.items[0];
    assert.ok(card.kind === 'tool');
    assert.deepEqual(card.content, [{ type: 'terminal', output: 'a\nb\n', exitCode: 0 }]);
  });

  it('ignores an update for an unknown tool call and unknown kinds', () => {
    const s = run([
      ['t1', { kind: 'tool_call_update', toolCallId: 'nope', status: 'completed' }],
      ['t1', { kind: 'future_thing' } as unknown as SessionUpdate],
    ]);
    assert.deepEqual(s.items, []);
  });

  it('busy follows the live turn; history replays do not make it busy', () => {
    const live = run([['t1', { kind: 'user_message', content: [] }]]);
    assert.equal(live.busy, true);
    assert.deepEqual(live.rewindable, ['t1']);
    run([['t1', { kind: 'turn_end', stopReason: 'end_turn' }]], true, live);
    assert.equal(live.busy, false);
    const replay = run([['t1', { kind: 'user_message', content: [] }]], false);
    assert.equal(replay.busy, false);
    assert.deepEqual(replay.rewindable, []);
  });

  it('a turn the daemon starts by itself makes the chat busy until it ends', () => {
    const s = run([['t9', { kind: 'agent_message_chunk', text: 'The build finished.' }]]);
    assert.equal(s.busy, true);
    run([['t9', { kind: 'turn_end', stopReason: 'end_turn' }]], true, s);
    assert.equal(s.busy, false);
  });

  it('a cancelled turn fails the cards that never finished', () => {
    const s = run([['t1', toolCall('c1')], ['t1', { kind: 'turn_end', stopReason: 'cancelled' }]]);
    const card = s.items[0];
    assert.equal(card.kind === 'tool' && card.status, 'failed');
    assert.equal(s.items[1].kind === 'turn_end' && s.items[1].stopReason, 'cancelled');
  });

  it('keeps the latest plan, tasks by id, and usage per turn folded into the session', () => {
    const s = run([
      ['t1', { kind: 'plan', entries: [{ content: 'a', status: 'pending' }] }],
      ['t1', { kind: 'plan', entries: [{ content: 'a', status: 'completed' }, { content: 'b', status: 'in_progress' }] }],
      ['t1', { kind: 'task', taskId: 'k', status: 'running', description: 'server' }],
      ['t1', { kind: 'task', taskId: 'k', status: 'completed', description: 'server', summary: 'ok' }],
      ['t1', { kind: 'usage', inputTokens: 100, outputTokens: 10, cacheReadTokens: 50, cacheCreationTokens: 0, costUsd: 0.01, contextTokens: 160, contextWindow: 1000 }],
      ['t1', { kind: 'usage', inputTokens: 200, outputTokens: 20, cacheReadTokens: 50, cacheCreationTokens: 0, costUsd: 0.02, contextTokens: 270, contextWindow: 1000 }],
    ]);
    assert.deepEqual(s.plan.map((e) => e.status), ['completed', 'in_progress']);
    assert.deepEqual(s.tasks, [{ taskId: 'k', toolCallId: undefined, status: 'completed', description: 'server', summary: 'ok' }]);
    assert.equal(s.usage.turnInputTokens, 250, 'the cumulative report replaces, not adds');
    assert.equal(s.usage.contextTokens, 270);
    run([['t1', { kind: 'turn_end', stopReason: 'end_turn' }]], true, s);
    assert.equal(s.usage.sessionTokens, 270);
    assert.equal(s.usage.sessionCostUsd, 0.02);
    assert.equal(s.usage.turnCostUsd, undefined);
  });

  it('rewound drops the turn and everything after it', () => {
    const s = run([
      ['t1', { kind: 'user_message', content: [] }],
      ['t1', { kind: 'turn_end', stopReason: 'end_turn' }],
      ['t2', { kind: 'user_message', content: [] }],
      ['t2', { kind: 'turn_end', stopReason: 'end_turn' }],
      ['t3', { kind: 'user_message', content: [] }],
    ]);
    reduce(s, { type: 'rewound', turnId: 't2' });
    assert.deepEqual(s.items.map((i) => i.turnId), ['t1', 't1']);
    assert.deepEqual(s.rewindable, ['t1']);
  });

  it('puts an open question on its card, clears it with the answer, and ends it with the call', () => {
    const s = run([['t1', toolCall('c1')]]);
    const question = { kind: 'tool' as const, sessionId: 's1', choices: [{ label: 'Allow once', optionId: 'allow_once', kind: 'allow_once' as const }], hasDiff: false };
    reduce(s, { type: 'question', sessionId: 's1', toolCallId: 'c1', question });
    const card = s.items[0];
    assert.ok(card.kind === 'tool');
    assert.deepEqual(card.question, question);
    reduce(s, { type: 'question', sessionId: 's1', toolCallId: 'c1', question: null, answered: { label: 'Allow once', optionId: 'allow_once' } });
    assert.equal(card.question, undefined);
    assert.deepEqual(card.answered, { label: 'Allow once', optionId: 'allow_once' });
    reduce(s, { type: 'question', sessionId: 's1', toolCallId: 'c1', question });
    run([['t1', { kind: 'tool_call_update', toolCallId: 'c1', status: 'completed' }]], true, s);
    assert.equal(card.question, undefined);
  });

  it('a question of another session makes no card and touches none in this transcript', () => {
    const s = run([['t1', toolCall('toolu_1_0')]]);
    const before = JSON.stringify(s);
    const question = { kind: 'tool' as const, sessionId: 's2', choices: [], hasDiff: false };
    reduce(s, { type: 'question', sessionId: 's2', toolCallId: 'toolu_1_0', question });
    reduce(s, { type: 'question', sessionId: 's2', toolCallId: 'toolu_9_0', question, call: { title: 'Write a.txt', toolKind: 'edit', rawInput: {} } });
    assert.equal(JSON.stringify(s), before, 'same tool id or a new one: nothing here asks');
  });

  it('a question that arrives before its card makes the card', () => {
    const s = run([['t1', { kind: 'user_message', content: [{ type: 'text', text: 'plan it' }] }]]);
    const question = { kind: 'plan' as const, sessionId: 's1', choices: [], plan: '1. a', hasDiff: false };
    reduce(s, { type: 'question', sessionId: 's1', toolCallId: 'p', question, call: { title: 'Leave plan mode with this plan', toolKind: 'think', rawInput: { plan: '1. a' } } });
    const card = s.items[1];
    assert.ok(card.kind === 'tool');
    assert.equal(card.turnId, 't1');
    assert.equal(card.question?.plan, '1. a');
  });

  it('a rejected call is marked as such, not as a plain failure', () => {
    const s = run([['t1', toolCall('c1')], ['t1', { kind: 'tool_call_update', toolCallId: 'c1', status: 'failed', rejected: 'user' }]]);
    const card = s.items[0];
    assert.ok(card.kind === 'tool');
    assert.equal(card.rejected, 'user');
  });

  it('shows a prompt queued during a turn until the daemon takes it in', () => {
    const s = run([['t1', { kind: 'user_message', content: [{ type: 'text', text: 'first' }] }]]);
    reduce(s, { type: 'queued', prompt: { id: 1, text: 'and the tests too' } });
    reduce(s, { type: 'queued', prompt: { id: 2, text: 'unrelated' } });
    run([['t1', { kind: 'user_message', content: [{ type: 'text', text: 'and  the tests\ntoo' }] }]], true, s);
    assert.deepEqual(s.queued, [{ id: 2, text: 'unrelated' }]);
    reduce(s, { type: 'unqueued', id: 2 });
    assert.deepEqual(s.queued, []);
  });

  it('a finished todo list does not stay pinned over the next request', () => {
    const s = run([
      ['t1', { kind: 'plan', entries: [{ content: 'a', status: 'completed' }] }],
      ['t2', { kind: 'user_message', content: [{ type: 'text', text: 'something else' }] }],
    ]);
    assert.deepEqual(s.plan, []);
    const open = run([
      ['t1', { kind: 'plan', entries: [{ content: 'a', status: 'completed' }, { content: 'b', status: 'pending' }] }],
      ['t2', { kind: 'user_message', content: [{ type: 'text', text: 'go on' }] }],
    ]);
    assert.equal(open.plan.length, 2, 'unfinished work stays in view');
  });

  it('a session undone down to nothing loses its title', () => {
    const s = emptyState('s1', 'default', 'Fix mean()');
    run([['t1', { kind: 'user_message', content: [{ type: 'text', text: 'Fix mean()' }] }]], true, s);
    reduce(s, { type: 'rewound', turnId: 't1' });
    assert.equal(s.title, null);
  });

  it('a reset snapshot is a deep copy, so host and webview never share objects', () => {
    const host = run([['t1', { kind: 'agent_message_chunk', text: 'a' }]]);
    const action: ChatAction = { type: 'reset', state: host };
    const copy = reduce(emptyState(), action);
    assert.deepEqual(copy, host);
    run([['t1', { kind: 'agent_message_chunk', text: 'b' }]], true, host);
    assert.equal(copy.items[0].kind === 'agent' && copy.items[0].text, 'a');
  });

  it('the webview replaying the host actions ends in the host state', () => {
    const actions: ChatAction[] = [
      { type: 'busy', busy: true },
      { type: 'update', turnId: 't', update: { kind: 'user_message', content: [{ type: 'text', text: 'x' }] }, live: true },
      { type: 'update', turnId: 't', update: toolCall('c'), live: true },
      { type: 'question', sessionId: 's', toolCallId: 'c', question: { kind: 'tool', sessionId: 's', choices: [], hasDiff: false } },
      { type: 'queued', prompt: { id: 1, text: 'more' } },
      { type: 'mode', mode: 'plan' },
      { type: 'update', turnId: 't', update: { kind: 'turn_end', stopReason: 'end_turn' }, live: true },
      { type: 'notice', level: 'warning', message: 'w' },
    ];
    const host = emptyState('s');
    const view = reduce(emptyState(), { type: 'reset', state: host });
    for (const a of actions) {
      reduce(host, a);
      reduce(view, a);
    }
    assert.deepEqual(view, host);
    assert.equal(host.mode, 'plan');
  });

  it('an edit that saved the user\'s unsaved lines says so on its running card; never on an old one', () => {
    const edit: SessionUpdate = { kind: 'tool_call', toolCallId: 'e1', title: 'Edit calc/ops.py', toolKind: 'edit', status: 'pending', rawInput: {}, locations: [{ uri: 'file:///w/calc/ops.py' }] };
    const s = run([['t1', toolCall('r1', 'Read calc/ops.py')], ['t1', edit]]);
    assert.equal(savingCall(s, 'file:///w/calc/ops%2Epy')?.toolCallId, 'e1');
    reduce(s, { type: 'savedUserEdits', uri: 'file:///w/calc/ops%2Epy' });
    const card = s.items.find((i) => i.kind === 'tool' && i.toolCallId === 'e1');
    assert.deepEqual(card?.kind === 'tool' && card.savedUserEdits, ['file:///w/calc/ops%2Epy'], 'the edit\'s card, matched by decoded URI');
    assert.equal(toolCardView(card as ToolCard).savedUserEdits?.[0], 'ops.py');
    assert.equal(toolCardView(card as ToolCard).expanded, true);
    // The edit finished; later a hunk undo (or a rewind, another session's edit) saves the file.
    run([['t1', { kind: 'tool_call_update', toolCallId: 'e1', status: 'completed' }], ['t1', { kind: 'turn_end', stopReason: 'end_turn' }]], true, s);
    const before = JSON.stringify(s);
    assert.equal(savingCall(s, 'file:///w/calc/ops.py'), undefined, 'no call of the chat is saving it now');
    reduce(s, { type: 'savedUserEdits', uri: 'file:///w/calc/ops.py' });
    reduce(s, { type: 'savedUserEdits', uri: 'file:///w/other.py' });
    assert.equal(JSON.stringify(s), before, 'the old card and the transcript are left alone');
    assert.equal(savedElsewhere('calc/ops.py', 'Tether: undo change'), 'Tether: saving calc/ops.py after "undo change" also saved the changes you had not saved yet.');
  });
});
