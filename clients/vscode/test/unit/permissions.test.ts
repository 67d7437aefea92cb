import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { PendingPermissions, buildQuestion, outcomeFor, outcomeOfKind } from '../../src/core/permissions';
import { PermissionRequestParams } from '../../src/core/wire';

const options: PermissionRequestParams['options'] = [
  { optionId: 'reject_once', name: 'Reject', kind: 'reject_once' },
  { optionId: 'allow_always', name: 'Allow always (Bash(npm test:*))', kind: 'allow_always' },
  { optionId: 'allow_once', name: 'Allow once', kind: 'allow_once' },
];

function request(extra: Partial<PermissionRequestParams['toolCall']>): PermissionRequestParams {
  return { sessionId: 's', toolCall: { toolCallId: 'c', title: 'Run npm test', toolKind: 'execute', rawInput: {}, ...extra }, options };
}

describe('permission questions', () => {
  it('orders the answers allow once, allow always, reject, and shows the command', () => {
    const q = buildQuestion(request({ rawInput: { command: 'npm test' } }));
    assert.equal(q.message, 'Tether wants to: Run npm test');
    assert.equal(q.detail, '$ npm test');
    assert.deepEqual(q.choices.map((c) => c.label), ['Allow once', 'Allow always (Bash(npm test:*))', 'Reject']);
    assert.deepEqual(q.diffs, []);
  });

  it('offers the proposed diff of an edit', () => {
    const q = buildQuestion(
      request({ title: 'Edit a.py', toolKind: 'edit', content: [{ type: 'diff', uri: 'file:///w/a.py', oldText: 'a\n', newText: 'b\n' }, { type: 'diff', uri: 'file:///w/n.py', newText: 'x' }] }),
      (uri) => uri.replace('file:///w/', ''),
    );
    assert.equal(q.detail, 'change a.py (+1 −1)\ncreate n.py (+1 −0)');
    assert.deepEqual(q.diffs, [{ uri: 'file:///w/a.py', oldText: 'a\n', newText: 'b\n' }, { uri: 'file:///w/n.py', oldText: null, newText: 'x' }]);
  });

  it('maps the picked label to its option, and a dismissed dialog to cancelled', () => {
    const q = buildQuestion(request({}));
    assert.deepEqual(outcomeFor(q, 'Allow once'), { outcome: { outcome: 'selected', optionId: 'allow_once' } });
    assert.deepEqual(outcomeFor(q, undefined), { outcome: { outcome: 'cancelled' } });
    assert.deepEqual(outcomeFor(q, 'Review diff'), { outcome: { outcome: 'cancelled' } });
    assert.deepEqual(outcomeOfKind(request({}), 'allow_always'), { outcome: { outcome: 'selected', optionId: 'allow_always' } });
    assert.deepEqual(outcomeOfKind(request({}), 'reject_always'), { outcome: { outcome: 'cancelled' } });
  });

  it('answers each pending question once, whoever answers first', async () => {
    const pending = new PendingPermissions();
    const q = buildQuestion(request({}));
    const answer = pending.open('c', q);
    assert.equal(pending.isPending('c'), true);
    assert.equal(pending.answerById('c', 'allow_always'), true);
    assert.equal(pending.answer('c', 'Reject'), false, 'the modal answering late is ignored');
    assert.deepEqual(await answer, { outcome: { outcome: 'selected', optionId: 'allow_always' } });
    assert.equal(pending.answerById('c', 'allow_once'), false);
  });

  it('a turn that ends makes the questions of its session moot', async () => {
    const pending = new PendingPermissions();
    const q = buildQuestion(request({}));
    const mine = pending.open('c', q, 's1');
    const other = pending.open('d', q, 's2');
    pending.cancelSession('s1');
    assert.deepEqual(await mine, { outcome: { outcome: 'cancelled' } });
    assert.equal(pending.isPending('d'), true);
    pending.answer('d', 'Allow once');
    assert.deepEqual(await other, { outcome: { outcome: 'selected', optionId: 'allow_once' } });
  });

  it('cancels everything when the daemon goes away, and a repeated question supersedes the old one', async () => {
    const pending = new PendingPermissions();
    const q = buildQuestion(request({}));
    const first = pending.open('c', q);
    const second = pending.open('c', q);
    assert.deepEqual(await first, { outcome: { outcome: 'cancelled' } });
    const other = pending.open('d', q);
    pending.cancelAll();
    assert.deepEqual(await second, { outcome: { outcome: 'cancelled' } });
    assert.deepEqual(await other, { outcome: { outcome: 'cancelled' } });
  });
});
