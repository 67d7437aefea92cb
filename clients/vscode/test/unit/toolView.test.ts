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

  it('awaiting permission overrides pending and opens the card', () => {
    const v = toolCardView(card({ awaitingPermission: true }));
    assert.equal(v.status, 'awaiting');
    assert.equal(v.statusLabel, 'Needs approval');
    assert.equal(v.expanded, true);
  });

  it('hides file bodies of reads and truncates long text', () => {
    assert.equal(toolCardView(card({ toolKind: 'read', status: 'completed', content: [{ type: 'text', text: '1 x' }] })).text, undefined);
    const long = toolCardView(card({ status: 'failed', content: [{ type: 'text', text: 'e'.repeat(5000) }] }));
    assert.match(long.text ?? '', /1000 more characters/);
    assert.equal(long.expanded, true, 'failures open');
  });
});
