import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { ToolCard } from '../../src/core/chatState';
import { toolCardView } from '../../src/core/toolView';

function card(extra: Partial<ToolCard>): ToolCard {
  return { kind: 'tool', id: 't:1', turnId: 't', rev: 1, toolCallId: '1', title: 'x', toolKind: 'other', status: 'pending', rawInput: {}, locations: [], content: [], ...extra };
}

describe('tool card view', () => {
  it('shows a Bash command, its output and exit code, open while running', () => {
    const v = toolCardView(card({ toolKind: 'execute', status: 'in_progress', rawInput: { command: 'npm test' }, content: [{ type: 'terminal', output: 'ok\n' }] }));
    assert.equal(v.command, 'npm test');
    assert.equal(v.output, 'ok\n');
    assert.equal(v.statusLabel, 'Running');
    assert.equal(v.icon, 'loading');
    assert.equal(v.expanded, true);
    const done = toolCardView(card({ toolKind: 'execute', status: 'completed', rawInput: { command: 'false' }, content: [{ type: 'terminal', output: '', exitCode: 1 }] }));
    assert.equal(done.exitCode, 1);
    assert.equal(done.expanded, false);
  });

  it('summarises edits as per-file line stats', () => {
    const v = toolCardView(card({ toolKind: 'edit', status: 'completed', content: [{ type: 'diff', uri: 'file:///w/a%20b.py', oldText: 'a\nb\nc\n', newText: 'a\nB\nB2\nc\n' }] }));
    assert.deepEqual(v.diffs, [{ uri: 'file:///w/a%20b.py', name: 'a b.py', added: 2, removed: 1 }]);
    assert.equal(v.expanded, true, 'a finished edit shows its diff link');
  });

  it('counts a new file as all added', () => {
    const v = toolCardView(card({ toolKind: 'edit', content: [{ type: 'diff', uri: 'file:///n.py', newText: 'x\ny' }] }));
    assert.deepEqual(v.diffs[0], { uri: 'file:///n.py', name: 'n.py', added: 2, removed: 0 });
  });

  it('an open question overrides pending and opens the card', () => {
    const v = toolCardView(card({ question: { kind: 'tool', sessionId: 's', choices: [], hasDiff: false } }));
    assert.equal(v.status, 'awaiting');
    assert.equal(v.statusLabel, 'Needs approval');
    assert.equal(v.expanded, true);
  });

  it('a rejected call says who rejected it, keeps closed, and is not a failure', () => {
    const v = toolCardView(card({ toolKind: 'edit', status: 'failed', rejected: 'user', content: [{ type: 'diff', uri: 'file:///a.py', oldText: 'a', newText: 'b' }] }));
    assert.equal(v.status, 'rejected');
    assert.equal(v.statusLabel, 'Rejected by you');
    assert.equal(v.icon, 'circle-slash');
    assert.equal(v.expanded, false);
    assert.equal(toolCardView(card({ status: 'failed', rejected: 'rule' })).statusLabel, 'Denied by a permission rule');
    assert.equal(toolCardView(card({ status: 'failed', rejected: 'hook' })).statusLabel, 'Blocked by a hook');
    assert.equal(toolCardView(card({ status: 'failed', rejected: 'mode' })).statusLabel, 'Not allowed in this mode');
  });

  it('says what a read read, and what a todo update holds', () => {
    const read = toolCardView(card({ toolKind: 'read', status: 'completed', content: [{ type: 'text', text: '     1\tdef mean(values):\n     2\t    return 0\n\n<system-reminder>x</system-reminder>' }] }));
    assert.equal(read.summary, 'Read 2 lines');
    assert.equal(read.text, undefined, 'the file body stays in the editor');
    const todo = toolCardView(card({ toolKind: 'think', status: 'completed', rawInput: { todos: [{ status: 'completed' }, { status: 'pending' }, { status: 'in_progress' }] }, content: [{ type: 'text', text: 'The todo list was updated.' }] }));
    assert.equal(todo.summary, '3 tasks, 1 done');
    assert.equal(todo.text, undefined);
    const bash = toolCardView(card({ toolKind: 'execute', status: 'completed', rawInput: { command: 'ls' }, content: [{ type: 'terminal', output: 'a\nb\n', exitCode: 0 }] }));
    assert.equal(bash.summary, 'exit code 0 · 2 lines of output');
  });

  it('a plan card shows the plan, open, with the answer and feedback once given', () => {
    const asked = toolCardView(card({ toolKind: 'think', rawInput: { plan: '1. Fix it' }, question: { kind: 'plan', sessionId: 's', choices: [], plan: '1. Fix it', hasDiff: false } }));
    assert.equal(asked.plan, '1. Fix it');
    assert.equal(asked.status, 'awaiting');
    assert.equal(asked.expanded, true);
    const kept = toolCardView(card({ toolKind: 'think', status: 'failed', rejected: 'user', rawInput: { plan: '1. Fix it' }, content: [{ type: 'text', text: '1. Fix it' }], answered: { label: 'Keep planning', optionId: 'plan_keep', feedback: 'Add tests' } }));
    assert.equal(kept.plan, '1. Fix it');
    assert.equal(kept.text, undefined, 'the plan is not repeated as text');
    assert.equal(kept.expanded, true, 'a plan stays in view');
    assert.equal(kept.statusLabel, 'Kept planning');
    assert.equal(kept.summary, undefined, 'the feedback shows under the plan, once');
    assert.equal(asked.statusLabel, 'Waiting for your answer');
    assert.equal(toolCardView(card({ toolKind: 'think', status: 'completed', rawInput: { plan: 'x' } })).statusLabel, 'Approved');
  });

  it('hides file bodies of reads and truncates long text', () => {
    assert.equal(toolCardView(card({ toolKind: 'read', status: 'completed', content: [{ type: 'text', text: '1 x' }] })).text, undefined);
    const long = toolCardView(card({ status: 'failed', content: [{ type: 'text', text: 'e'.repeat(5000) }] }));
    assert.match(long.text ?? '', /1000 more characters/);
    assert.equal(long.expanded, true, 'failures open');
  });
});
