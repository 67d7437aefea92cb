import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { lineStarts, regionLabel, spliceRegion, wholeTexts } from '../../src/core/diffRegion';

const file = (n: number, eol = '\n'): string => Array.from({ length: n }, (_, i) => `row ${i}${eol}`).join('');

describe('region diffs', () => {
  it('counts lines as the daemon does: \\n, \\r\\n and \\r end a line', () => {
    assert.deepEqual(lineStarts('a\nb\r\nc\rd'), [0, 2, 5, 7]);
    assert.deepEqual(lineStarts('a\n'), [0]);
  });

  for (const eol of ['\n', '\r\n', '\r']) {
    it(`puts a region back into the file, before or after the edit (${JSON.stringify(eol)})`, () => {
      const before = file(40, eol);
      const after = before.replace(`row 20${eol}`, `row twenty${eol}`);
      const diff = { oldText: [17, 18, 19, 20, 21, 22, 23].map((i) => `row ${i}${eol}`).join(''), newText: '', line: 17 };
      diff.newText = diff.oldText.replace('row 20', 'row twenty');
      assert.deepEqual(wholeTexts(diff, after, 'new'), { before, after }, 'the editor shows the edit done');
      assert.deepEqual(wholeTexts(diff, before, 'old'), { before, after }, 'the editor shows the edit to come');
      assert.deepEqual(wholeTexts(diff, after), { before, after });
      assert.equal(wholeTexts(diff, before, 'new'), undefined);
      assert.equal(wholeTexts(diff, file(40, eol).replace('row 18', 'typed'), 'new'), undefined, 'the file changed since');
      assert.equal(regionLabel(diff), 'lines 18–24');
    });
  }

  it('leaves whole-file diffs as they are and needs the file for a region', () => {
    assert.deepEqual(wholeTexts({ oldText: null, newText: 'n' }, undefined), { before: null, after: 'n' });
    assert.equal(wholeTexts({ oldText: 'a\n', newText: 'b\n', line: 3 }, undefined), undefined);
  });

  it('splices only whole lines at the given line, also at the very end', () => {
    assert.equal(spliceRegion('a\nb\nc\n', 1, 'b\n', 'B\nB2\n'), 'a\nB\nB2\nc\n');
    assert.equal(spliceRegion('a\nb\nc\n', 1, 'b', 'B'), undefined, 'a region ends at a line end');
    assert.equal(spliceRegion('a\nb\nc', 2, 'c', 'c\nd'), 'a\nb\nc\nd');
    assert.equal(spliceRegion('a\nb\n', 2, '', 'c\n'), 'a\nb\nc\n');
    assert.equal(spliceRegion('a\nb\n', 5, '', 'c\n'), undefined);
  });
});
