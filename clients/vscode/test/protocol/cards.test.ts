/** Tool cards, the plan, Bash output and diagnostics, as the chat shows them. */
import assert from 'node:assert/strict';
import * as fs from 'fs';
import * as path from 'path';
import { after, describe, it } from 'node:test';
import { pathToFileURL } from 'url';
import { uriKey } from '../../src/core/uri';
import { toolCardView } from '../../src/core/toolView';
import { Harness, startHarness } from '../support/daemon';

const harnesses: Harness[] = [];
after(async () => {
  await Promise.all(harnesses.map((h) => h.stop()));
});

describe('cards, plan and diagnostics', () => {
  it('shows the todo plan and a Bash command with its output', async () => {
    const todos = [
      { content: 'Run the tests', status: 'in_progress', activeForm: 'Running the tests' },
      { content: 'Report', status: 'pending', activeForm: 'Reporting' },
    ];
    const h = await startHarness({
      script: [
        [{ type: 'tool_use', name: 'TodoWrite', input: { todos } }, { type: 'tool_use', name: 'Bash', input: { command: 'echo tether-out; exit 3', description: 'Print and fail' } }],
        [{ type: 'text', text: 'The command failed with 3.' }],
      ],
      mode: 'bypassPermissions',
    });
    harnesses.push(h);
    await h.controller.send([{ type: 'text', text: 'run it' }]);
    const state = h.controller.state;
    assert.deepEqual(state.plan.map((e) => [e.content, e.status]), [['Run the tests', 'in_progress'], ['Report', 'pending']]);
    const bash = state.items.find((i) => i.kind === 'tool' && i.toolKind === 'execute');
    assert.ok(bash && bash.kind === 'tool');
    const view = toolCardView(bash);
    assert.equal(view.command, 'echo tether-out; exit 3');
    assert.equal(view.output?.trim(), 'tether-out');
    assert.equal(view.exitCode, 3);
  });

  it("forwards diagnostics of a file the agent edited and the model sees them", async () => {
    const problem = "undefined name 'bogus'";
    const h = await startHarness({
      script: [
        [{ type: 'tool_use', name: 'Read', input: { file_path: 'calc/ops.py' } }],
        [{ type: 'tool_use', name: 'Edit', input: { file_path: 'calc/ops.py', old_string: '    return a + b', new_string: '    return a + bogus' } }],
        // The daemon adds new errors in edited files to the next request; the script checks it.
        { expect: { contains: problem }, blocks: [{ type: 'text', text: 'Oops, I will fix that.' }] },
      ],
      mode: 'bypassPermissions',
    });
    harnesses.push(h);
    const file = path.join(h.workspace, 'calc/ops.py');
    const uri = pathToFileURL(file).toString();
    // A language server that reports the error when the edited file is saved. Before that,
    // the file became touched and its (clean) diagnostics went out as the baseline.
    const error = { range: { start: { line: 4, character: 15 }, end: { line: 4, character: 20 } }, severity: 0, message: problem, source: 'pyflakes' };
    h.files.onSave = (saved) => h.publishDiagnostics(saved, [error]);
    const untouched = pathToFileURL(path.join(h.workspace, 'README.md')).toString();
    await h.publishDiagnostics(untouched, [error]); // not a file the agent touched
    const result = await h.controller.send([{ type: 'text', text: 'change add' }]);
    assert.ok(h.tracker.touched.has(uriKey(uri)), 'the edited file counts as touched');
    assert.deepEqual(
      h.sentDiagnostics.map((d) => [uriKey(d.uri), d.diagnostics.map((x) => x.message)]),
      [[uriKey(uri), []], [uriKey(uri), [problem]]],
      'a clean baseline before the edit, the new error after it, nothing for other files',
    );
    const end = h.controller.state.items.at(-1);
    assert.equal(result?.stopReason, 'end_turn', `${JSON.stringify(end)}\n${h.stderr()}`);
    assert.match(fs.readFileSync(file, 'utf8'), /a \+ bogus/);
  });
});
