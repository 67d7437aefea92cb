/**
 * A turn's change set through the extension's typed API and hunk index, against the real
 * daemon: the hunks of a turn listed with their places, one undone (applyEdit, then saved;
 * the other stays), one kept, a `changes` update after each, and the counts.
 */
import assert from 'node:assert/strict';
import * as fs from 'fs';
import * as path from 'path';
import { after, describe, it } from 'node:test';
import { HunkIndex } from '../../src/core/hunks';
import { HUNK_STATES } from '../../src/core/wire';
import { Harness, startHarness } from '../support/daemon';

const harnesses: Harness[] = [];
after(async () => {
  await Promise.all(harnesses.map((h) => h.stop()));
});

describe('a turn\'s change set against the real daemon', () => {
  it('lists a turn\'s hunks, undoes one in the buffer and on disk, keeps the other', async () => {
    const h = await startHarness({
      mode: 'bypassPermissions',
      script: [
        [{ type: 'tool_use', name: 'Read', input: { file_path: 'calc/ops.py' } }],
        [{ type: 'tool_use', name: 'Edit', input: { file_path: 'calc/ops.py', old_string: '    return a + b', new_string: '    total = a + b\n    return total' } }],
        [{ type: 'tool_use', name: 'Edit', input: { file_path: 'calc/ops.py', old_string: '    return sum(values) / (len(values) + 1)', new_string: '    return sum(values) / len(values)' } }],
        [{ type: 'text', text: 'Two changes.' }],
      ],
    });
    harnesses.push(h);
    const sessionId = await h.controller.newSession();
    const file = path.join(h.workspace, 'calc/ops.py');
    const uri = h.files.open(file);
    const result = await h.controller.send([{ type: 'text', text: 'tidy add, fix mean' }]);
    assert.equal(result?.stopReason, 'end_turn');
    const changed = h.updates.filter((u) => u.update.kind === 'changes');
    assert.equal(changed.length, 1, 'the turn\'s changes update');

    const index = new HunkIndex();
    index.reset(sessionId, await h.api.listChanges(sessionId, { states: [...HUNK_STATES] }));
    const pending = index.pending(uri);
    assert.deepEqual(pending.map((x) => [x.range!.start.line, x.range!.end.line]), [[4, 6], [14, 15]]);
    assert.deepEqual(pending.map((x) => x.turnId), [result!.turnId, result!.turnId]);
    assert.equal(index.at(uri, 5)?.hunkId, pending[0].hunkId);

    const undone = await h.api.undoChanges(sessionId, { hunkIds: [pending[0].hunkId] });
    assert.deepEqual(undone, { undone: [pending[0].hunkId] });
    await h.waitFor(() => fs.readFileSync(file, 'utf8').includes('    return a + b\n'), 'the undo saved');
    assert.match(fs.readFileSync(file, 'utf8'), /return sum\(values\) \/ len\(values\)/, 'the other change stays');
    assert.ok(h.files.events.some((e) => e === `applyEdit ${uri}`));

    const kept = await h.api.keepChanges(sessionId, { uri });
    assert.deepEqual(kept.kept, [pending[1].hunkId]);
    await h.waitFor(() => h.updates.filter((u) => u.update.kind === 'changes').length >= 3, 'a changes update after each');
    const listing = await h.api.listChanges(sessionId, { uri, states: [...HUNK_STATES] });
    index.replaceFile(uri, listing);
    assert.deepEqual(listing.counts, { pending: 0, kept: 1, undone: 1, conflicts: 0 });
    assert.deepEqual(index.countsByTurn().get(result!.turnId), listing.counts);
    assert.equal(index.pending(uri).length, 0);
  });
});
