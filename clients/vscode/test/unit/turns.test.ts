import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { ChangeTracker, promptText } from '../../src/core/turns';
import { uriKey } from '../../src/core/uri';

describe('change tracker', () => {
  it('records per turn the text before its first edit and after its last', () => {
    const t = new ChangeTracker();
    let changes = 0;
    t.onDidChange(() => changes++);
    t.apply('s', 't1', { kind: 'user_message', content: [{ type: 'text', text: ' fix   the\nbug ' }] });
    t.apply('s', 't1', { kind: 'tool_call', toolCallId: 'e1', title: 'Edit a.py', toolKind: 'edit', status: 'pending', rawInput: {}, locations: [{ uri: 'file:///w/a.py' }] });
    assert.ok(t.touched.has(uriKey('file:///w/a.py')), 'touched as soon as the edit is announced');
    t.apply('s', 't1', { kind: 'tool_call_update', toolCallId: 'e1', status: 'completed', content: [{ type: 'diff', uri: 'file:///w/a.py', oldText: 'v0', newText: 'v1' }] });
    t.apply('s', 't1', { kind: 'tool_call_update', toolCallId: 'e2', status: 'completed', content: [{ type: 'diff', uri: 'file:///w/a.py', oldText: 'v1', newText: 'v2' }] });
    t.apply('s', 't1', { kind: 'tool_call_update', toolCallId: 'e3', status: 'completed', content: [{ type: 'diff', uri: 'file:///w/new.py', newText: 'n' }] });
    t.apply('s', 't1', { kind: 'turn_end', stopReason: 'end_turn' });
    const [turn] = t.list('s');
    assert.equal(turn.prompt, 'fix the bug');
    assert.deepEqual(turn.files, [{ uri: 'file:///w/a.py', before: 'v0', after: 'v2' }, { uri: 'file:///w/new.py', before: null, after: 'n' }]);
    assert.equal(turn.finished, true);
    assert.ok(changes >= 3);
  });

  it('lists newest first, only turns with changes, per session', () => {
    const t = new ChangeTracker();
    for (const id of ['t1', 't2', 't3']) {
      t.apply('s', id, { kind: 'user_message', content: [{ type: 'text', text: id }] });
      if (id !== 't2') t.apply('s', id, { kind: 'tool_call_update', toolCallId: id, content: [{ type: 'diff', uri: `file:///${id}`, oldText: '', newText: 'x' }] });
    }
    t.apply('other', 'o', { kind: 'tool_call_update', toolCallId: 'o', content: [{ type: 'diff', uri: 'file:///o', oldText: '', newText: 'x' }] });
    assert.deepEqual(t.list('s').map((x) => x.turnId), ['t3', 't1']);
    t.rewound('s', 't1');
    assert.deepEqual(t.list('s'), [], 'a rewind drops the turn and every later one');
    assert.equal(t.list('other').length, 1);
  });

  it('rebuilds a loaded session\'s turns from its history, without touching files', () => {
    const t = new ChangeTracker();
    const touched: string[] = [];
    t.onDidTouch((u) => touched.push(u));
    t.apply('s', 'old', { kind: 'user_message', content: [{ type: 'text', text: 'stale' }] });
    t.load('s', [
      { turnId: 't1', kind: 'user_message', content: [{ type: 'text', text: 'Fix mean' }] },
      { turnId: 't1', kind: 'tool_call', toolCallId: 'e1', title: 'Edit a.py', toolKind: 'edit', status: 'pending', rawInput: {}, locations: [{ uri: 'file:///w/a.py' }] },
      { turnId: 't1', kind: 'tool_call_update', toolCallId: 'e1', status: 'completed', content: [{ type: 'diff', uri: 'file:///w/a.py', oldText: 'a\n', newText: 'b\n' }] },
      { turnId: 't1', kind: 'tool_call_update', toolCallId: 'e2', status: 'completed', content: [{ type: 'diff', uri: 'file:///w/a.py', oldText: 'b\n', newText: 'c\n' }] },
      { turnId: 't1', kind: 'turn_end', stopReason: 'end_turn' },
      { turnId: 't2', kind: 'user_message', content: [{ type: 'text', text: 'Older daemon turn' }] },
      { turnId: 't2', kind: 'tool_call_update', toolCallId: 'e3', status: 'completed', content: [{ type: 'diff', uri: 'file:///w/b.py', oldText: null, newText: 'n\n' }] },
    ], ['t1']);
    assert.deepEqual(t.list('s').map((x) => [x.turnId, x.finished, x.rewindable]), [['t2', true, false], ['t1', true, true]]);
    assert.deepEqual(t.find('s', 't1')?.files, [{ uri: 'file:///w/a.py', before: 'a\n', after: 'c\n' }], 'before the turn, after its last edit');
    assert.equal(t.find('s', 'old'), undefined, 'the loaded history replaces what was there');
    assert.deepEqual(touched, []);
  });

  it('puts a big file\'s region diffs into the open document to keep whole texts', () => {
    const lines = (n: number, change = -1): string => Array.from({ length: n }, (_, i) => (i === change ? `changed ${i}\n` : `row ${i}\n`)).join('');
    const region = (from: number, to: number, change: number) => ({
      oldText: lines(to).split('\n').slice(from, to).map((l) => `${l}\n`).join(''),
      newText: lines(to, change).split('\n').slice(from, to).map((l) => `${l}\n`).join(''),
    });
    let open: string | undefined = lines(100, 50);
    const t = new ChangeTracker((uri) => (uri === 'file:///w/big.py' ? open : undefined));
    t.apply('s', 't1', { kind: 'tool_call_update', toolCallId: 'e1', content: [{ type: 'diff', uri: 'file:///w/big.py', ...region(47, 54, 50), line: 47 }] });
    assert.deepEqual(t.find('s', 't1')?.files, [{ uri: 'file:///w/big.py', before: lines(100), after: lines(100, 50) }]);
    // A second edit of the same file is put into the text the first one left.
    const second = { oldText: 'row 10\n', newText: 'ten\n', line: 10 };
    open = undefined;
    t.apply('s', 't1', { kind: 'tool_call_update', toolCallId: 'e2', content: [{ type: 'diff', uri: 'file:///w/big.py', ...second }] });
    assert.deepEqual(t.find('s', 't1')?.files, [{ uri: 'file:///w/big.py', before: lines(100), after: lines(100, 50).replace('row 10\n', 'ten\n') }]);
    // Without the file at hand (a loaded history), the region is what is known.
    t.load('s', [{ turnId: 't2', kind: 'tool_call_update', toolCallId: 'e3', content: [{ type: 'diff', uri: 'file:///w/big.py', ...second }] }], []);
    assert.deepEqual(t.find('s', 't2')?.files, [{ uri: 'file:///w/big.py', before: 'row 10\n', after: 'ten\n', line: 10 }]);
  });

  it('touches files an applyEdit names, comparing URIs by their decoded form', () => {
    const t = new ChangeTracker();
    t.touch('file:///w/a%20b.py');
    assert.ok(t.touched.has(uriKey('file:///w/a b.py')));
  });

  it('prompt text skips attachments', () => {
    assert.equal(promptText([{ type: 'resource_link', uri: 'file:///a' }, { type: 'text', text: 'why?' }]), 'why?');
  });
});

describe('uri keys', () => {
  it('treat encodings and Windows drive letter case alike', () => {
    assert.equal(uriKey('file:///C%3A/x%20y.py'), uriKey('file:///c:/x y.py'));
    assert.equal(uriKey('file:///bad%zz'), 'file:///bad%zz');
  });
});
