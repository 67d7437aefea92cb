import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { PendingPermissions, buildQuestion, outcomeOfKind } from '../../src/core/permissions';
import { describeRule } from '../../src/core/rules';
import { PermissionRequestParams } from '../../src/core/wire';

const options: PermissionRequestParams['options'] = [
  { optionId: 'reject_once', name: 'Reject', kind: 'reject_once' },
  { optionId: 'allow_always', name: 'Always allow Bash(npm test:*)', kind: 'allow_always', rule: 'Bash(npm test:*)' },
  { optionId: 'allow_once', name: 'Allow once', kind: 'allow_once' },
];

function request(extra: Partial<PermissionRequestParams['toolCall']>, more: Partial<PermissionRequestParams> = {}): PermissionRequestParams {
  return { sessionId: 's', toolCall: { toolCallId: 'c', title: 'Run npm test', toolKind: 'execute', rawInput: {}, ...extra }, options, ...more };
}

const PLAN: PermissionRequestParams = {
  sessionId: 's',
  kind: 'plan',
  plan: '# Plan\n1. Fix `mean()`',
  toolCall: { toolCallId: 'p', title: 'Leave plan mode with this plan', toolKind: 'think', rawInput: { plan: '# Plan\n1. Fix `mean()`' } },
  options: [
    { optionId: 'plan_default', name: 'Start (ask before edits)', kind: 'allow_once' },
    { optionId: 'plan_accept_edits', name: 'Start (accept edits)', kind: 'allow_once' },
    { optionId: 'plan_keep', name: 'Keep planning', kind: 'reject_once' },
  ],
};

/** A question's key: the tool call in session `s` (or another). */
const k = (toolCallId: string, sessionId = 's') => ({ sessionId, toolCallId });

describe('permission questions', () => {
  it('orders the answers allow once, allow always, reject; shows the command and the rule', () => {
    const q = buildQuestion(request({ rawInput: { command: 'npm test' } }));
    assert.equal(q.kind, 'tool');
    assert.equal(q.message, 'Tether wants to: Run npm test');
    assert.equal(q.detail, '$ npm test');
    assert.deepEqual(q.choices.map((c) => c.label), ['Allow once', 'Always allow Bash(npm test:*)', 'Reject']);
    assert.equal(q.choices[1].rule, 'Bash(npm test:*)');
    assert.deepEqual(q.diffs, []);
  });

  it('puts the rule into the label when an older daemon left it out of the name', () => {
    const q = buildQuestion(request({}, { options: [{ optionId: 'a', name: 'Allow always', kind: 'allow_always', rule: 'Bash(make:*)' }] }));
    assert.equal(q.choices[0].label, 'Allow always Bash(make:*)');
  });

  it('offers the proposed diff of an edit', () => {
    const q = buildQuestion(
      request({ title: 'Edit a.py', toolKind: 'edit', content: [{ type: 'diff', uri: 'file:///w/a.py', oldText: 'a\n', newText: 'b\n' }, { type: 'diff', uri: 'file:///w/n.py', newText: 'x' }] }),
      (uri) => uri.replace('file:///w/', ''),
    );
    assert.equal(q.detail, 'change a.py (+1 −1)\ncreate n.py (+1 −0)');
    assert.deepEqual(q.diffs, [{ uri: 'file:///w/a.py', oldText: 'a\n', newText: 'b\n' }, { uri: 'file:///w/n.py', oldText: null, newText: 'x' }]);
  });

  it('a plan keeps the daemon\'s order of answers and carries the plan', () => {
    const q = buildQuestion(PLAN);
    assert.equal(q.kind, 'plan');
    assert.equal(q.plan, '# Plan\n1. Fix `mean()`');
    assert.deepEqual(q.choices.map((c) => c.optionId), ['plan_default', 'plan_accept_edits', 'plan_keep']);
    const fromInput = buildQuestion({ ...PLAN, plan: undefined });
    assert.equal(fromInput.plan, '# Plan\n1. Fix `mean()`', 'an older daemon: the plan from the call\'s input');
  });

  it('picks by kind for automatic answers', () => {
    assert.deepEqual(outcomeOfKind(request({}), 'allow_always'), { outcome: { outcome: 'selected', optionId: 'allow_always' } });
    assert.deepEqual(outcomeOfKind(request({}), 'reject_always'), { outcome: { outcome: 'cancelled' } });
  });
});

describe('pending questions', () => {
  it('answers each question once, whoever answers first', async () => {
    const pending = new PendingPermissions();
    const answer = pending.open(k('c'), buildQuestion(request({})));
    assert.equal(pending.isPending(k('c')), true);
    assert.equal(pending.answer(k('c'), 'allow_always'), true);
    assert.equal(pending.answerLabel(k('c'), 'Reject'), false, 'the modal answering late is ignored');
    assert.deepEqual(await answer, {
      outcome: { outcome: { outcome: 'selected', optionId: 'allow_always' } },
      answer: { label: 'Always allow Bash(npm test:*)', optionId: 'allow_always' },
    });
    assert.equal(pending.answer(k('c'), 'allow_once'), false);
  });

  it('a dismissed dialog answers nothing: the question stays open for the card', async () => {
    const pending = new PendingPermissions();
    const answer = pending.open(k('c'), buildQuestion(request({})));
    assert.equal(pending.answerLabel(k('c'), undefined), false);
    assert.equal(pending.answer(k('c'), 'no_such_option'), false);
    assert.equal(pending.isPending(k('c')), true);
    assert.equal(pending.answerLabel(k('c'), 'Allow once'), true);
    assert.deepEqual((await answer).outcome, { outcome: { outcome: 'selected', optionId: 'allow_once' } });
  });

  it('carries feedback with the answer, trimmed, and leaves it out when empty', async () => {
    const pending = new PendingPermissions();
    const keep = pending.open(k('p'), buildQuestion(PLAN));
    pending.answer(k('p'), 'plan_keep', '  Also cover the empty list.  ');
    assert.deepEqual(await keep, {
      outcome: { outcome: { outcome: 'selected', optionId: 'plan_keep', feedback: 'Also cover the empty list.' } },
      answer: { label: 'Keep planning', optionId: 'plan_keep', feedback: 'Also cover the empty list.' },
    });
    const start = pending.open(k('p'), buildQuestion(PLAN));
    pending.answer(k('p'), 'plan_default', '   ');
    assert.deepEqual((await start).outcome, { outcome: { outcome: 'selected', optionId: 'plan_default' } });
  });

  it('the daemon withdraws questions: one, a session\'s (its turn ended), or all (it went away)', async () => {
    const pending = new PendingPermissions();
    const q = buildQuestion(request({}));
    const mine = pending.open(k('c', 's1'), q);
    const other = pending.open(k('d', 's2'), q);
    pending.withdrawSession('s1');
    assert.deepEqual(await mine, { outcome: { outcome: { outcome: 'cancelled' } }, answer: undefined });
    assert.equal(pending.isPending(k('d', 's2')), true);
    const third = pending.open(k('e', 's2'), q);
    pending.withdraw(k('e', 's2'));
    assert.deepEqual((await third).outcome, { outcome: { outcome: 'cancelled' } });
    pending.withdrawAll();
    assert.deepEqual((await other).outcome, { outcome: { outcome: 'cancelled' } });
  });

  it('a repeated question supersedes the old one', async () => {
    const pending = new PendingPermissions();
    const q = buildQuestion(request({}));
    const first = pending.open(k('c'), q);
    const second = pending.open(k('c'), q);
    assert.deepEqual((await first).outcome, { outcome: { outcome: 'cancelled' } });
    pending.answer(k('c'), 'allow_once');
    assert.deepEqual((await second).outcome, { outcome: { outcome: 'selected', optionId: 'allow_once' } });
  });

  it('two sessions asking about the same tool id are two questions: each answered, withdrawn and listed alone', async () => {
    const pending = new PendingPermissions();
    const q = buildQuestion(request({}));
    const a = pending.open(k('toolu_1_0', 'A'), q);
    const b = pending.open(k('toolu_1_0', 'B'), q);
    assert.equal(pending.isPending(k('toolu_1_0', 'A')), true, 'B\'s question does not supersede A\'s');
    assert.deepEqual(pending.list('B').map((o) => o.key), [k('toolu_1_0', 'B')]);
    pending.withdraw(k('toolu_1_0', 'B'));
    assert.deepEqual((await b).outcome, { outcome: { outcome: 'cancelled' } });
    assert.equal(pending.answer(k('toolu_1_0', 'B'), 'allow_once'), false);
    assert.equal(pending.answer(k('toolu_1_0', 'A'), 'allow_once'), true, 'A still asks, and its answer goes to A');
    assert.deepEqual((await a).outcome, { outcome: { outcome: 'selected', optionId: 'allow_once' } });
    const c = pending.open(k('toolu_1_0', 'A'), q);
    pending.withdrawSession('B');
    assert.equal(pending.isPending(k('toolu_1_0', 'A')), true, 'B\'s turn ending withdraws nothing of A\'s');
    pending.withdrawAll();
    await c;
  });
});

describe('what an "always" rule means', () => {
  it('says a leading / is the workspace folder, // the file system, ~/ the home folder', () => {
    assert.equal(describeRule('Edit(/calc/ops.py)', 'ws'), 'editing calc/ops.py in the folder ws');
    assert.equal(describeRule('Edit(/calc/ops.py)'), 'editing calc/ops.py in this workspace folder');
    assert.equal(describeRule('Write(//etc/hosts)', 'ws'), 'writing /etc/hosts');
    assert.equal(describeRule('Read(~/notes.md)'), 'reading ~/notes.md in your home folder');
    assert.equal(describeRule('Edit(/src/**)', 'ws'), 'editing files matching src/** in the folder ws');
  });

  it('says what commands, fetches and tools a rule covers', () => {
    assert.equal(describeRule('Bash(npm test:*)'), 'commands that start with npm test');
    assert.equal(describeRule('Bash(git status)'), 'the command git status, exactly');
    assert.equal(describeRule('WebFetch(domain:docs.python.org)'), 'fetching from docs.python.org');
    assert.equal(describeRule('mcp__github__create_issue'), 'the tool create_issue of the MCP server github');
    assert.equal(describeRule('mcp__github'), 'every tool of the MCP server github');
    assert.equal(describeRule('Glob'), 'every Glob call');
  });

  it('goes with the "always" choices of a question', () => {
    const q = buildQuestion(request({ rawInput: { command: 'npm test' } }), undefined, 'ws');
    assert.equal(q.choices.find((c) => c.kind === 'allow_always')?.meaning, 'commands that start with npm test');
    assert.equal(q.choices.find((c) => c.kind === 'allow_once')?.meaning, undefined);
  });
});
