/** The VS Code glue, with the `vscode` module stubbed (test/support/vscodeStub.ts). */
import { calls, diagnostics, document, documents, fireDiagnostics, readVirtual, statusItems, warningAnswers, Uri } from '../support/vscodeStub';
import assert from 'node:assert/strict';
import { beforeEach, describe, it } from 'node:test';
import { DiagnosticsParams, PermissionRequestParams } from '../../src/core/wire';
import { TetherApi } from '../../src/core/rpc';
import { ChangeTracker } from '../../src/core/turns';
import { forwardDiagnostics } from '../../src/vscode/diagnosticsForwarder';
import { DiffDocuments } from '../../src/vscode/diffDocuments';
import { saveDocuments } from '../../src/vscode/documents';
import { PermissionDialog } from '../../src/vscode/permissionDialog';
import { StatusBar } from '../../src/vscode/statusBar';
import { NEVER, TestToken } from '../support/fakeRpc';

beforeEach(() => {
  calls.length = 0;
  warningAnswers.length = 0;
  documents.length = 0;
});

const EDIT: PermissionRequestParams = {
  sessionId: 's',
  toolCall: { toolCallId: 'c1', title: 'Edit a.py', toolKind: 'edit', rawInput: {}, content: [{ type: 'diff', uri: 'file:///w/a.py', oldText: 'old\n', newText: 'new\n' }] },
  options: [
    { optionId: 'allow_once', name: 'Allow once', kind: 'allow_once' },
    { optionId: 'allow_always', name: 'Allow always', kind: 'allow_always' },
    { optionId: 'reject_once', name: 'Reject', kind: 'reject_once' },
  ],
};

describe('permission dialog', () => {
  it('asks in a modal with the answers and "Review diff", and returns the pick', async () => {
    const awaiting: boolean[] = [];
    const dialog = new PermissionDialog(new DiffDocuments(), { awaiting: (_id, a) => awaiting.push(a) });
    warningAnswers.push('Allow once');
    const outcome = await dialog.ask(EDIT, NEVER);
    assert.deepEqual(outcome, { outcome: { outcome: 'selected', optionId: 'allow_once' } });
    const [modal] = calls;
    assert.equal(modal.args[0], 'Tether wants to: Edit a.py');
    assert.deepEqual(modal.args[1], { modal: true, detail: 'change a.py (+1 −1)' });
    assert.deepEqual(modal.args.slice(2), ['Allow once', 'Allow always', 'Reject', 'Review diff']);
    assert.deepEqual(awaiting, [true, false], 'the chat card shows the question while it is open');
  });

  it('"Review diff" opens the diff editor on the proposed change and asks again without a modal', async () => {
    const diffs = new DiffDocuments();
    const dialog = new PermissionDialog(diffs, { awaiting: () => {} });
    warningAnswers.push('Review diff', 'Reject');
    const outcome = await dialog.ask(EDIT, NEVER);
    assert.deepEqual(outcome, { outcome: { outcome: 'selected', optionId: 'reject_once' } });
    const diff = calls.find((c) => c.method === 'executeCommand');
    assert.ok(diff);
    assert.equal(diff.args[0], 'vscode.diff');
    assert.equal(readVirtual(diff.args[1] as Uri), 'old\n');
    assert.equal(readVirtual(diff.args[2] as Uri), 'new\n');
    const again = calls.filter((c) => c.method === 'showWarningMessage')[1];
    assert.equal(typeof again.args[1], 'string', 'the second ask is a plain notification');
  });

  it('a dismissed modal is a cancelled answer; so is a cancelled request', async () => {
    const dialog = new PermissionDialog(new DiffDocuments(), { awaiting: () => {} });
    warningAnswers.push(undefined);
    assert.deepEqual(await dialog.ask(EDIT, NEVER), { outcome: { outcome: 'cancelled' } });
    const token = new TestToken();
    // The modal never answers here; the daemon withdraws the question.
    const pending = dialog.ask({ ...EDIT, toolCall: { ...EDIT.toolCall, toolCallId: 'c2' } }, token);
    token.cancel();
    assert.deepEqual(await pending, { outcome: { outcome: 'cancelled' } });
  });

  it('the chat card can answer while the modal is open', async () => {
    const dialog = new PermissionDialog(new DiffDocuments(), { awaiting: () => {} });
    const pending = dialog.ask(EDIT, NEVER); // showWarningMessage answers undefined later
    dialog.pending.answerById('c1', 'allow_always');
    assert.deepEqual(await pending, { outcome: { outcome: 'selected', optionId: 'allow_always' } });
  });
});

describe('saveDocuments', () => {
  it('saves open dirty documents (matched by decoded URI) and opens the others first', async () => {
    const open = document('file:///w/a%20b.py');
    documents.push(open);
    await saveDocuments(['file:///w/a b.py', 'file:///w/c.py']);
    assert.equal(open.saves, 1);
    assert.equal(documents.length, 2, 'c.py was opened to be saved');
    assert.equal(documents[1].saves, 0, 'a clean document is not saved again');
  });
});

describe('diagnostics forwarding', () => {
  it('sends a baseline when a file becomes touched, then changes of touched files only', async () => {
    const sent: DiagnosticsParams[] = [];
    const api = { sendDiagnostics: async (p: DiagnosticsParams) => void sent.push(p) } as unknown as TetherApi;
    const tracker = new ChangeTracker();
    forwardDiagnostics(tracker, () => api);
    const old = { range: { start: { line: 0, character: 0 }, end: { line: 0, character: 1 } }, severity: 1, message: 'old warning' };
    diagnostics.set('file:///w/a.py', [old]);
    tracker.touch('file:///w/a.py');
    tracker.touch('file:///w/a.py');
    assert.deepEqual(sent, [{ uri: 'file:///w/a.py', diagnostics: [{ ...old, severity: 2 }] }], 'one baseline, before the edit');
    sent.length = 0;
    diagnostics.set('file:///w/a.py', [{ range: { start: { line: 1, character: 2 }, end: { line: 1, character: 5 } }, severity: 0, message: 'boom', source: 'ruff', code: { value: 'F821' } }]);
    fireDiagnostics(['file:///w/a.py', 'file:///w/b.py']);
    assert.deepEqual(sent, [{ uri: 'file:///w/a.py', diagnostics: [{ range: { start: { line: 1, character: 2 }, end: { line: 1, character: 5 } }, severity: 1, message: 'boom', source: 'ruff', code: 'F821' }] }]);
  });
});

describe('status bar', () => {
  it('shows starting, idle, the running tool and a disconnected daemon', () => {
    const bar = new StatusBar();
    const item = statusItems.at(-1)!;
    assert.equal(item.command, 'tether.openChat');
    bar.render({ busy: false, currentTool: null });
    assert.equal(item.text, '$(sync~spin) Tether');
    bar.setConnection('ready');
    bar.render({ busy: true, currentTool: 'Run the tests' });
    assert.equal(item.text, '$(loading~spin) Tether: Run the tests');
    assert.match(String(item.tooltip), /working: Run the tests\nClick to open the chat/);
    bar.setConnection('down', 'not found');
    bar.render({ busy: false, currentTool: null });
    assert.equal(item.text, '$(debug-disconnect) Tether');
    assert.ok(item.backgroundColor);
  });
});
