import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { buildPrompt, findMentions, insertMention, mentionAtCaret, selectionLabel } from '../../src/core/mentions';

describe('@file mentions', () => {
  it('finds mentions, without trailing punctuation, e-mail addresses or repeats', () => {
    assert.deepEqual(findMentions('look at @calc/ops.py, and @tests/test_ops.py. Mail me@x.org, again @calc/ops.py'), ['calc/ops.py', 'tests/test_ops.py']);
  });

  it('builds text plus a resource link per resolved mention and attachment', () => {
    const resolve = (p: string) => (p === 'missing.py' ? undefined : `file:///w/${p}`);
    const blocks = buildPrompt('  fix @a.py and @missing.py  ', [
      { uri: 'file:///w/b.py', label: 'b.py:2-3', range: { start: { line: 1, character: 0 }, end: { line: 2, character: 4 } } },
      { uri: 'file:///w/a.py', label: 'a.py' },
    ], resolve);
    assert.deepEqual(blocks, [
      { type: 'text', text: 'fix @a.py and @missing.py' },
      { type: 'resource_link', uri: 'file:///w/a.py', name: 'a.py' },
      { type: 'resource_link', uri: 'file:///w/b.py', range: { start: { line: 1, character: 0 }, end: { line: 2, character: 4 } }, name: 'b.py:2-3' },
    ]);
  });

  it('sends attachments alone when there is no text', () => {
    assert.deepEqual(buildPrompt(' ', [{ uri: 'file:///a', label: 'a' }], () => undefined), [{ type: 'resource_link', uri: 'file:///a', name: 'a' }]);
  });

  it('knows the @query being typed at the caret', () => {
    assert.deepEqual(mentionAtCaret('see @cal', 8), { start: 4, query: 'cal' });
    assert.deepEqual(mentionAtCaret('@', 1), { start: 0, query: '' });
    assert.equal(mentionAtCaret('see @calc/ops.py now', 20), null);
    assert.equal(mentionAtCaret('me@host', 7), null);
    assert.equal(mentionAtCaret('plain', 5), null);
  });

  it('inserts the picked path and moves the caret past it', () => {
    assert.deepEqual(insertMention('see @cal please', 4, 8, 'calc/ops.py'), { text: 'see @calc/ops.py  please', caret: 17 });
  });

  it('labels selections with 1-based lines', () => {
    assert.equal(selectionLabel('a.py', { start: { line: 0, character: 2 }, end: { line: 0, character: 9 } }), 'a.py:1');
    assert.equal(selectionLabel('a.py', { start: { line: 3, character: 0 }, end: { line: 6, character: 0 } }), 'a.py:4-6');
    assert.equal(selectionLabel('a.py', { start: { line: 3, character: 0 }, end: { line: 6, character: 1 } }), 'a.py:4-7');
  });
});
