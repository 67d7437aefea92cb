import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { HunkIndex, countHunks, countLabel, linesLabel, notDoneMessage } from '../../src/core/hunks';
import { ChangeListing, Hunk, HunkState } from '../../src/core/wire';

const A = 'file:///w/a.py';
const B = 'file:///w/b%20c.py';

function hunk(hunkId: string, state: HunkState, start: number, end: number, extra: Partial<Hunk> = {}): Hunk {
  return {
    hunkId,
    turnId: hunkId.split('-')[0],
    state,
    conflict: false,
    oldText: 'old\n',
    newText: 'new\n',
    summary: `change ${hunkId}`,
    range: { start: { line: start, character: 0 }, end: { line: end, character: 0 } },
    ...extra,
  };
}

function listing(files: { uri: string; hunks: Hunk[] }[]): ChangeListing {
  return { files, counts: countHunks(files.flatMap((f) => f.hunks)) };
}

describe('hunk index', () => {
  const session = () => {
    const index = new HunkIndex();
    index.reset('s', listing([
      { uri: A, hunks: [hunk('t1-2', 'pending', 10, 12), hunk('t1-1', 'pending', 2, 3), hunk('t1-3', 'kept', 20, 21), hunk('t2-1', 'undone', 30, 30)] },
      { uri: B, hunks: [hunk('t1-4', 'pending', 5, 5), hunk('t2-2', 'pending', 0, 0, { conflict: true, range: undefined })] },
    ]));
    return index;
  };

  it('shows only pending hunks that have a place, in line order', () => {
    const index = session();
    assert.deepEqual(index.pending(A).map((h) => h.hunkId), ['t1-1', 't1-2']);
    assert.deepEqual(index.pending('file:///w/b c.py').map((h) => h.hunkId), ['t1-4'], 'URIs compared by key');
  });

  it('finds the hunk under the cursor: every line of a range, the start line of removed lines', () => {
    const index = session();
    assert.equal(index.at(A, 2)?.hunkId, 't1-1');
    assert.equal(index.at(A, 3), undefined, 'end is the start of the line after');
    assert.equal(index.at(A, 11)?.hunkId, 't1-2');
    assert.equal(index.at(A, 20), undefined, 'kept hunks are not under review');
    assert.equal(index.at(B, 5)?.hunkId, 't1-4', 'an empty range (lines removed) is on its line');
  });

  it('steps to the next and previous pending hunk, across files and round', () => {
    const index = session();
    const step = (uri: string, line: number, d: 1 | -1) => {
      const r = index.step(uri, line, d);
      return r && `${r.uri === A ? 'a' : 'b'}:${r.hunk.hunkId}`;
    };
    assert.equal(step(A, 0, 1), 'a:t1-1');
    assert.equal(step(A, 2, 1), 'a:t1-2');
    assert.equal(step(A, 10, 1), 'b:t1-4', 'then the next file');
    assert.equal(step(B, 5, 1), 'a:t1-1', 'round to the first');
    assert.equal(step(A, 2, -1), 'b:t1-4', 'back into the previous file (round)');
    assert.equal(step(A, 40, -1), 'a:t1-2');
    assert.equal(step('file:///w/other.py', 0, 1), 'a:t1-1', 'from a file without changes');
    const empty = new HunkIndex();
    assert.equal(empty.step(A, 0, 1), undefined);
  });

  it('counts per turn and replaces one file after it is listed again', () => {
    const index = session();
    assert.deepEqual(Object.fromEntries(index.countsByTurn()), {
      t1: { pending: 3, kept: 1, undone: 0, conflicts: 0 },
      t2: { pending: 0, kept: 0, undone: 1, conflicts: 1 },
    });
    assert.deepEqual(index.conflicts(B).map((h) => h.hunkId), ['t2-2'], 'each hunk counted once: the conflict is no pending one too');
    assert.deepEqual(index.reviewable(B).map((h) => h.hunkId), ['t1-4', 't2-2'], 'still to review, conflict or not');
    index.replaceFile(A, listing([{ uri: A, hunks: [hunk('t1-1', 'undone', 2, 3), hunk('t1-2', 'kept', 10, 12)] }]));
    assert.deepEqual(index.countsByTurn().get('t1'), { pending: 1, kept: 1, undone: 1, conflicts: 0 });
    assert.deepEqual(index.all().map((f) => f.uri), [A, B], 'the file keeps its place');
    index.replaceFile(B, listing([]));
    assert.equal(index.has(B), false, 'a file without hunks any more is dropped');
    assert.deepEqual(index.turnFiles('t2'), [], 'the undone hunk of t2 went with its file listing');
    index.reset('other');
    assert.deepEqual(index.all(), []);
    assert.equal(index.sessionId, 'other');
  });

  it('labels counts and lines as the user reads them', () => {
    assert.equal(countLabel({ pending: 1, kept: 1, undone: 2, conflicts: 0 }), '1 pending · 1 kept · 2 undone');
    assert.equal(countLabel({ pending: 0, kept: 0, undone: 0, conflicts: 2 }), '2 conflicts');
    assert.equal(linesLabel({ start: { line: 4, character: 0 }, end: { line: 6, character: 0 } }), 'lines 5–6');
    assert.equal(linesLabel({ start: { line: 4, character: 0 }, end: { line: 5, character: 0 } }), 'line 5');
    assert.equal(linesLabel({ start: { line: 4, character: 0 }, end: { line: 4, character: 7 } }), 'line 5', 'the last line, without a final line break');
    assert.equal(linesLabel({ start: { line: 4, character: 0 }, end: { line: 4, character: 0 } }), 'above line 5');
  });

  it('names the file, the lines and the daemon\'s reason of each change it did not undo', () => {
    const known = new Map([['t1-1', hunk('t1-1', 'pending', 4, 6)], ['t1-9', hunk('t1-9', 'kept', 0, 0, { range: undefined, summary: 'added 1 line ("x")' })]]);
    const reason = 'its lines were changed after the turn made them (by you or a later turn); undo the later change first, or edit the lines by hand';
    const one = notDoneMessage('undo', [{ hunkId: 't1-1', uri: A, reason, conflict: true }], (id) => known.get(id), () => 'src/a.py');
    assert.equal(one, `Tether could not undo the change in src/a.py, lines 5–6: ${reason}`);
    const two = notDoneMessage('keep', [{ hunkId: 't1-1', uri: A, reason: 'undone', conflict: false }, { hunkId: 't1-9', uri: B, reason: 'r', conflict: true }], (id) => known.get(id), (u) => (u === A ? 'a.py' : 'b c.py'));
    assert.equal(two, 'Tether could not keep 2 changes: a.py, lines 5–6: undone; b c.py, the change "added 1 line ("x")": r');
  });
});
