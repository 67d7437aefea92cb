/** The VS Code glue, with the `vscode` module stubbed (test/support/vscodeStub.ts). */
import { calls, tabs, codeActionProviders, codeLensProviders, diagnostics, disk, editor, document, documents, fireDiagnostics, infoAnswers, readVirtual, statusItems, textEditor, visibleEditors, warningAnswers, Uri } from '../support/vscodeStub';
import assert from 'node:assert/strict';
import { beforeEach, describe, it } from 'node:test';
import { CardQuestion } from '../../src/core/chatState';
import { Answer } from '../../src/core/permissions';
import { DiagnosticsParams, Hunk, PermissionRequestParams } from '../../src/core/wire';
import { TetherApi } from '../../src/core/rpc';
import { ChangeTracker } from '../../src/core/turns';
import { ChangesView } from '../../src/vscode/changesView';
import { HunkReview } from '../../src/vscode/hunkReview';
import { forwardDiagnostics } from '../../src/vscode/diagnosticsForwarder';
import { fixCommands, registerFixProvider } from '../../src/vscode/fixes';
import { ContentBlock } from '../../src/core/wire';
import { DiffDocuments } from '../../src/vscode/diffDocuments';
import { saveDocuments } from '../../src/vscode/documents';
import { PermissionDialog } from '../../src/vscode/permissionDialog';
import { StatusBar } from '../../src/vscode/statusBar';
import { FakeRpc, NEVER, TestToken } from '../support/fakeRpc';

/** The log channel, for modules that only warn into it. */
const OUTPUT = { info() {}, warn() {}, error() {} } as never;

beforeEach(() => {
  calls.length = 0;
  tabs.length = 0;
  warningAnswers.length = 0;
  infoAnswers.length = 0;
  documents.length = 0;
});

const EDIT: PermissionRequestParams = {
  sessionId: 's',
  toolCall: { toolCallId: 'c1', title: 'Edit a.py', toolKind: 'edit', rawInput: {}, content: [{ type: 'diff', uri: 'file:///w/a.py', oldText: 'old\n', newText: 'new\n' }] },
  options: [
    { optionId: 'allow_once', name: 'Allow once', kind: 'allow_once' },
    { optionId: 'allow_always', name: 'Always allow Edit(/a.py)', kind: 'allow_always', rule: 'Edit(/a.py)' },
    { optionId: 'reject_once', name: 'Reject', kind: 'reject_once' },
    { optionId: 'reject_always', name: 'Always reject Edit(/a.py)', kind: 'reject_always', rule: 'Edit(/a.py)' },
  ],
};

const PLAN: PermissionRequestParams = {
  sessionId: 's',
  kind: 'plan',
  plan: '1. Fix mean()',
  toolCall: { toolCallId: 'p1', title: 'Leave plan mode with this plan', toolKind: 'think', rawInput: { plan: '1. Fix mean()' } },
  options: [
    { optionId: 'plan_default', name: 'Start (ask before edits)', kind: 'allow_once' },
    { optionId: 'plan_accept_edits', name: 'Start (accept edits)', kind: 'allow_once' },
    { optionId: 'plan_keep', name: 'Keep planning', kind: 'reject_once' },
  ],
};

describe('permission questions in the editor', () => {
  type Shown = { id: string; session?: string; question: CardQuestion | null; answered?: Answer };
  /** The chat shows session `s` unless `shownSession` says otherwise; the user is in it
   * when `focused`. */
  function dialog(options: { visible?: boolean; focused?: boolean; wantsDialog?: boolean; shownSession?: string } = {}) {
    const shown: Shown[] = [];
    const revealed: (string | undefined)[] = [];
    const switched: string[] = [];
    const diffs = new DiffDocuments();
    const chat = { session: options.shownSession ?? 's' };
    const d: PermissionDialog = new PermissionDialog(diffs, {
      show: (id, question, extra) => shown.push({ id: id.toolCallId, ...(id.sessionId === 's' ? {} : { session: id.sessionId }), question, answered: extra.answered }),
      chatVisible: () => options.visible ?? true,
      chatFocused: () => options.focused ?? false,
      shownSession: () => chat.session,
      showSession: async (sessionId) => {
        switched.push(sessionId);
        chat.session = sessionId;
        d.replay(sessionId);
      },
      sessionTitle: async (sessionId) => (sessionId === 'B' ? 'hello B' : undefined),
      revealChat: async (id) => void revealed.push(id),
      wantsDialog: () => options.wantsDialog ?? false,
      sessionFolder: () => 'ws',
    });
    return { d, shown, revealed, switched };
  }
  const key = (toolCallId: string, sessionId = 's') => ({ sessionId, toolCallId });
  const settle = async () => {
    for (let i = 0; i < 5; i++) await new Promise((r) => setTimeout(r, 0));
  };
  const dialogs = () => calls.filter((c) => c.method === 'showWarningMessage' || c.method === 'showInformationMessage');

  it('asks on the chat card only: no dialog, no notification while the chat is in view', async () => {
    const { d, shown } = dialog();
    const pending = d.ask(EDIT, NEVER);
    await settle();
    assert.deepEqual(dialogs(), [], 'nothing takes the focus from the editor');
    assert.equal(d.pending.isPending(key('c1')), true);
    assert.equal(shown[0].question?.hasDiff, true);
    assert.deepEqual(shown[0].question?.choices.map((c) => c.label), ['Allow once', 'Always allow Edit(/a.py)', 'Reject', 'Always reject Edit(/a.py)']);
    assert.equal(shown[0].question?.choices[1].meaning, 'editing a.py in the folder ws');
    d.pending.answer(key('c1'), 'reject_once', 'use a helper instead');
    assert.deepEqual(await pending, { outcome: { outcome: 'selected', optionId: 'reject_once', feedback: 'use a helper instead' } });
    assert.deepEqual(shown.at(-1), { id: 'c1', question: null, answered: { label: 'Reject', optionId: 'reject_once', feedback: 'use a helper instead' } });
  });

  it('with the chat out of sight, a notification points to the card; it answers nothing', async () => {
    const { d, revealed } = dialog({ visible: false });
    infoAnswers.push('Show in Chat');
    const pending = d.ask(EDIT, NEVER);
    await settle();
    const [note] = dialogs();
    assert.equal(note.method, 'showInformationMessage');
    assert.deepEqual(note.args, ['Tether needs your approval: Edit a.py', 'Show in Chat', 'Review diff'], 'not modal, no answer buttons');
    assert.deepEqual(revealed, ['c1'], 'the chat, at the card');
    assert.equal(d.pending.isPending(key('c1')), true, 'still asking');
    d.pending.answer(key('c1'), 'allow_once');
    await pending;
  });

  it('the modal, when turned on: its first (focused) button allows nothing, Escape answers nothing', async () => {
    const { d } = dialog({ wantsDialog: true });
    warningAnswers.push(undefined); // Escape
    const pending = d.ask(EDIT, NEVER);
    await settle();
    const [modal] = dialogs();
    assert.deepEqual(modal.args[1], { modal: true, detail: 'change a.py (+1 −1)' });
    const titles = (modal.args.slice(2) as { title: string; isCloseAffordance?: boolean }[]).map((i) => `${i.title}${i.isCloseAffordance ? ' (Escape)' : ''}`);
    assert.deepEqual(titles, ['Show in Chat', 'Review diff', 'Allow once', 'Always allow Edit(/a.py)', 'Reject', 'Always reject Edit(/a.py)', 'Not Now (Escape)']);
    assert.equal(d.pending.isPending(key('c1')), true);
    warningAnswers.push({ title: 'Allow once' } as unknown as string);
    await d.dialog(key('c1'));
    assert.deepEqual(await pending, { outcome: { outcome: 'selected', optionId: 'allow_once' } });
  });

  it('the modal stays away while the user is in the chat (visible and focused), and comes when it is not', async () => {
    const inChat = dialog({ wantsDialog: true, visible: true, focused: true });
    const first = inChat.d.ask(EDIT, NEVER);
    await settle();
    assert.deepEqual(dialogs(), [], 'the card in front of the user is the question');
    inChat.d.pending.answer(key('c1'), 'allow_once');
    await first;
    const elsewhere = dialog({ wantsDialog: true, visible: true, focused: false });
    warningAnswers.push(undefined);
    const second = elsewhere.d.ask(EDIT, NEVER);
    await settle();
    assert.equal(dialogs()[0]?.method, 'showWarningMessage', 'typing in an editor: the modal asks');
    assert.equal((dialogs()[0].args[1] as { modal: boolean }).modal, true);
    elsewhere.d.pending.answer(key('c1'), 'allow_once');
    await second;
  });

  it('a question of a session not shown: no card here, a notification names the session, "Show Session" shows it at the card', async () => {
    const { d, shown, revealed, switched } = dialog({ shownSession: 'A' });
    infoAnswers.push('Show Session');
    const asked = d.ask({ ...EDIT, sessionId: 'B' }, NEVER);
    await settle();
    const [note] = dialogs();
    assert.equal(note.method, 'showInformationMessage', 'shown although the chat is visible: it shows another session');
    assert.deepEqual(note.args, ['Tether (in the session "hello B") needs your approval: Edit a.py', 'Show Session', 'Review diff']);
    assert.deepEqual(switched, ['B'], 'the chat switched to the asking session');
    assert.deepEqual(revealed, ['c1']);
    assert.deepEqual(shown.map((x) => `${x.session}:${x.id}:${x.question ? 'asks' : 'ends'}`), ['B:c1:asks', 'B:c1:asks'], 'on B\'s card, again once B is shown');
    assert.equal(d.pending.answer(key('c1'), 'allow_once'), false, 'session s has no such question');
    assert.equal(d.pending.answer(key('c1', 'B'), 'allow_once'), true);
    assert.deepEqual(await asked, { outcome: { outcome: 'selected', optionId: 'allow_once' } });
  });

  it('two sessions asking about the same tool id: withdrawing one leaves the other asking', async () => {
    const { d, shown } = dialog();
    infoAnswers.push(undefined);
    const tokenB = new TestToken();
    const inS = d.ask(EDIT, NEVER);
    const inB = d.ask({ ...EDIT, sessionId: 'B' }, tokenB);
    await settle();
    tokenB.cancel();
    assert.deepEqual(await inB, { outcome: { outcome: 'cancelled' } });
    assert.equal(d.pending.isPending(key('c1')), true, 's still asks');
    assert.equal(shown.filter((x) => x.session === undefined && x.question === null).length, 0, 's\'s card was not ended by B');
    d.pending.answer(key('c1'), 'reject_once');
    assert.deepEqual(await inS, { outcome: { outcome: 'selected', optionId: 'reject_once' } });
  });

  it('"Review diff" opens the proposed change; the tab closes once the question is answered', async () => {
    const { d } = dialog();
    const pending = d.ask(EDIT, NEVER);
    await settle();
    await d.reviewDiff(key('c1'));
    const diff = calls.find((c) => c.method === 'executeCommand' && c.args[0] === 'vscode.diff')!;
    assert.equal(readVirtual(diff.args[1] as Uri), 'old\n');
    assert.equal(readVirtual(diff.args[2] as Uri), 'new\n');
    assert.deepEqual(tabs.map((t) => t.label), ['a.py (proposed by Tether)']);
    d.pending.answer(key('c1'), 'allow_once');
    await pending;
    await settle();
    assert.deepEqual(tabs, [], 'the stale proposal is gone');
  });

  it('a question the daemon withdraws ($/cancelRequest) ends with cancelled and closes its diff', async () => {
    const { d, shown } = dialog();
    const token = new TestToken();
    const pending = d.ask({ ...EDIT, toolCall: { ...EDIT.toolCall, toolCallId: 'c2' } }, token);
    await settle();
    await d.reviewDiff(key('c2'));
    token.cancel();
    assert.deepEqual(await pending, { outcome: { outcome: 'cancelled' } });
    assert.equal(shown.at(-1)?.question, null, 'the card stops asking');
    await settle();
    assert.deepEqual(tabs, []);
  });

  it('a plan goes to its card; the answer carries the feedback', async () => {
    const { d, shown } = dialog();
    const pending = d.ask(PLAN, NEVER);
    await settle();
    assert.deepEqual(dialogs(), [], 'no dialog for a plan, and the chat is in view');
    assert.equal(shown[0].question?.kind, 'plan');
    assert.equal(shown[0].question?.plan, '1. Fix mean()');
    d.pending.answer(key('p1'), 'plan_keep', 'Cover the empty list');
    assert.deepEqual(await pending, { outcome: { outcome: 'selected', optionId: 'plan_keep', feedback: 'Cover the empty list' } });
    assert.deepEqual(shown.at(-1)?.answered, { label: 'Keep planning', optionId: 'plan_keep', feedback: 'Cover the empty list' });
  });

  it('a plan while the chat is out of sight says so in a notification that opens the chat', async () => {
    const { d, revealed } = dialog({ visible: false });
    infoAnswers.push('Review Plan');
    const pending = d.ask(PLAN, NEVER);
    await settle();
    assert.deepEqual(revealed, ['p1']);
    d.pending.answer(key('p1'), 'plan_default');
    await pending;
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

describe('changes view', () => {
  function twoTurns() {
    const tracker = new ChangeTracker();
    const diff = (turn: string, id: string, before: string, after: string) =>
      tracker.apply('s', turn, { kind: 'tool_call_update', toolCallId: id, content: [{ type: 'diff', uri: 'file:///w/a.py', oldText: before, newText: after }] });
    tracker.apply('s', 't1', { kind: 'user_message', content: [{ type: 'text', text: 'one' }] });
    diff('t1', 'c1', 'v0\n', 'v1\n');
    tracker.apply('s', 't2', { kind: 'user_message', content: [{ type: 'text', text: 'two' }] });
    diff('t2', 'c2', 'v1\n', 'v2\n');
    const review = new HunkReview({ api: () => null, sessionId: () => 's', output: OUTPUT, extensionUri: Uri.parse('file:///ext') as never });
    const view = new ChangesView(tracker, new DiffDocuments(), { activeSession: () => 's', rewind: async () => [] }, review);
    return { tracker, view };
  }
  const diffSides = () => {
    const call = calls.filter((c) => c.method === 'executeCommand' && c.args[0] === 'vscode.diff').at(-1)!;
    const right = call.args[2] as Uri;
    return [readVirtual(call.args[1] as Uri), right.scheme === 'file' ? `file:${right.path}` : readVirtual(right)];
  };

  it('an earlier turn\'s diff ends where that turn ended, not at the file as it is now', async () => {
    const { tracker, view } = twoTurns();
    disk.set('file:///w/a.py', 'v2\n');
    const [first, second] = [tracker.find('s', 't1')!, tracker.find('s', 't2')!];
    await view.commands()['tether.openChange'](view.getChildren({ turn: first })[0]);
    assert.deepEqual(diffSides(), ['v0\n', 'v1\n']);
    // The latest turn, while the file still reads as it left it: the file itself (editable).
    await view.commands()['tether.openChange'](view.getChildren({ turn: second })[0]);
    assert.deepEqual(diffSides(), ['v1\n', 'file:/w/a.py']);
    // Edited since: the text the turn left.
    disk.set('file:///w/a.py', 'v3\n');
    await view.commands()['tether.openChange'](view.getChildren({ turn: second })[0]);
    assert.deepEqual(diffSides(), ['v1\n', 'v2\n']);
    view.dispose();
  });

  it('offers Undo only for turns the daemon can rewind', async () => {
    const { tracker, view } = twoTurns();
    tracker.load('s', [{ turnId: 'old', kind: 'user_message', content: [{ type: 'text', text: 'old' }] }, { turnId: 'old', kind: 'tool_call_update', toolCallId: 'x', content: [{ type: 'diff', uri: 'file:///w/b.py', oldText: 'a', newText: 'b' }] }], []);
    const [node] = view.getChildren();
    assert.equal(view.getTreeItem(node).contextValue, 'tetherTurnKept');
    await view.commands()['tether.undoTurn'](node);
    assert.match(String(calls.at(-1)?.args[0]), /cannot undo this turn/);
    view.dispose();
  });
});

describe('Fix with Tether', () => {
  const problem = (line: number, severity: number, message: string) => ({
    range: { start: { line, character: 2 }, end: { line, character: 5 } },
    severity,
    message,
    source: 'json',
  });

  it('a quick fix per diagnostic, which runs a turn about that problem in its file\'s session', async () => {
    const asked: [ContentBlock[], string][] = [];
    const fixes = fixCommands({ ask: async (p, file) => void asked.push([p, file.toString()]), attachFile: async () => {} });
    registerFixProvider();
    const provider = codeActionProviders.at(-1)!;
    const doc = { uri: Uri.parse('file:///w/c.json') };
    const one = provider.provideCodeActions(doc, null, { diagnostics: [problem(2, 0, 'Trailing comma')] }) as { title: string; command: { command: string; arguments: unknown[] } }[];
    assert.deepEqual(one.map((a) => a.title), ['Fix with Tether']);
    const two = provider.provideCodeActions(doc, null, { diagnostics: [problem(2, 0, 'Trailing comma'), problem(2, 1, 'Odd')] }) as { title: string }[];
    assert.deepEqual(two.map((a) => a.title), ['Fix with Tether: Trailing comma', 'Fix with Tether: Odd']);
    assert.equal(one[0].command.command, 'tether.fix');
    await fixes['tether.fix'](...one[0].command.arguments);
    assert.equal(asked[0][1], 'file:///w/c.json');
    assert.equal(asked[0][0][0].type === 'text' && asked[0][0][0].text, 'Fix this problem in c.json: line 3, error: Trailing comma (json)');
  });

  it('the editor title button sends the file\'s errors and warnings, or adds a file without any', async () => {
    const asked: ContentBlock[][] = [];
    const attached: string[] = [];
    const fixes = fixCommands({ ask: async (p) => void asked.push(p), attachFile: async (uri) => void attached.push(uri.toString()) });
    editor.active = { document: { uri: Uri.parse('file:///w/a.py') } };
    diagnostics.set('file:///w/a.py', [problem(4, 3, 'hint only'), problem(1, 1, 'shadowed'), problem(7, 0, 'undefined')]);
    await fixes['tether.fixFile']();
    assert.match(asked[0][0].type === 'text' ? asked[0][0].text : '', /^Fix these problems in a\.py:\n- line 8, error: undefined \(json\)\n- line 2, warning: shadowed \(json\)$/);
    diagnostics.set('file:///w/a.py', [problem(4, 3, 'hint only')]);
    await fixes['tether.fixFile']();
    assert.deepEqual(attached, ['file:///w/a.py']);
    assert.equal(asked.length, 1);
    editor.active = undefined;
  });
});

describe('hunk review', () => {
  const A = 'file:///w/calc/ops.py';
  const hunk = (hunkId: string, state: 'pending' | 'kept' | 'undone', start: number, end: number): Hunk => ({
    hunkId,
    turnId: 't1',
    state,
    conflict: false,
    oldText: '    return a + b\n',
    newText: '    total = a + b\n    return total\n',
    summary: `change ${hunkId}`,
    range: { start: { line: start, character: 0 }, end: { line: end, character: 0 } },
  });

  function setUp(hunks: Hunk[]) {
    const rpc = new FakeRpc();
    let listed = hunks;
    rpc.replies['tether/listChanges'] = () => ({ files: listed.length ? [{ uri: A, hunks: listed }] : [], counts: { pending: 0, kept: 0, undone: 0, conflicts: 0 } });
    const api = new TetherApi(rpc);
    const review = new HunkReview({ api: () => api, sessionId: () => 's', output: OUTPUT, extensionUri: Uri.parse('file:///ext') as never });
    return { rpc, review, relist: (next: Hunk[]) => (listed = next) };
  }

  it('decorates the pending hunks and puts Keep / Undo above each, Keep all / Undo all on top', async () => {
    const shown = textEditor(A);
    visibleEditors.splice(0, visibleEditors.length, shown);
    codeLensProviders.length = 0;
    editor.active = shown;
    const { review } = setUp([hunk('t1-1', 'pending', 4, 6), hunk('t1-2', 'pending', 13, 14), hunk('t1-3', 'kept', 20, 21)]);
    await review.listAll();
    const context = calls.filter((c) => c.method === 'executeCommand' && c.args[0] === 'setContext' && c.args[1] === 'tether.editorHasChanges');
    assert.deepEqual(context.at(-1)?.args, ['setContext', 'tether.editorHasChanges', true], 'the keybindings apply in this editor');
    const decorated = [...shown.decorations.values()].flat();
    assert.equal(decorated.length, 2, 'the kept hunk is not decorated');
    assert.deepEqual(decorated.map((d) => ({ ...(d.range as object) })), [{ startLine: 4, startCharacter: 0, endLine: 5, endCharacter: 0 }, { startLine: 13, startCharacter: 0, endLine: 13, endCharacter: 0 }]);
    assert.match(String((decorated[0].hoverMessage as { value: string }).value), /-    return a \+ b\n\+    total = a \+ b/);
    const lenses = codeLensProviders[0].provideCodeLenses({ uri: Uri.parse(A) });
    assert.deepEqual(lenses.map((l) => [l.command!.title, l.command!.command, JSON.stringify(l.command!.arguments)]), [
      ['$(check-all) Keep all 2 Tether changes', 'tether.keepFileChanges', JSON.stringify([{ uri: A }])],
      ['$(discard) Undo all', 'tether.undoFileChanges', JSON.stringify([{ uri: A }])],
      ['$(check) Keep', 'tether.keepChange', JSON.stringify([{ uri: A, hunkIds: ['t1-1'] }])],
      ['$(discard) Undo', 'tether.undoChange', JSON.stringify([{ uri: A, hunkIds: ['t1-1'] }])],
      ['$(check) Keep', 'tether.keepChange', JSON.stringify([{ uri: A, hunkIds: ['t1-2'] }])],
      ['$(discard) Undo', 'tether.undoChange', JSON.stringify([{ uri: A, hunkIds: ['t1-2'] }])],
    ]);
    visibleEditors.length = 0;
    editor.active = undefined;
    review.dispose();
  });

  it('undoes the hunk under the cursor; a conflict is an error naming the file and lines', async () => {
    const { rpc, review, relist } = setUp([hunk('t1-1', 'pending', 4, 6)]);
    await review.listAll();
    editor.active = textEditor(A, 5);
    const reason = 'its lines were changed after the turn made them (by you or a later turn); undo the later change first, or edit the lines by hand';
    rpc.replies['tether/undoChanges'] = () => ({ undone: [], notUndone: [{ hunkId: 't1-1', uri: A, reason, conflict: true }] });
    relist([{ ...hunk('t1-1', 'pending', 4, 6), conflict: true, range: undefined }]);
    await review.commands()['tether.undoChange']();
    assert.deepEqual(rpc.sent.find((m) => m.method === 'tether/undoChanges')?.params, { sessionId: 's', hunkIds: ['t1-1'] });
    const error = calls.find((c) => c.method === 'showErrorMessage');
    assert.equal(error?.args[0], `Tether could not undo the change in calc/ops.py, lines 5–6: ${reason}`);
    // The file was listed again: the conflict has no place, so nothing is under review there.
    assert.equal(review.index.pending(A).length, 0);
    editor.active = textEditor(A, 0);
    await review.commands()['tether.keepChange']();
    assert.match(String(calls.at(-1)?.args[0]), /not on a pending change/);
    editor.active = undefined;
    review.dispose();
  });

  it('a change whose lines the user edited keeps its actions: Keep as is, an Undo that explains, the file-level commands', async () => {
    const shown = textEditor(A);
    visibleEditors.splice(0, visibleEditors.length, shown);
    codeLensProviders.length = 0;
    editor.active = shown;
    const conflict: Hunk = { ...hunk('t1-2', 'pending', 0, 0), conflict: true, range: undefined };
    const { rpc, review, relist } = setUp([hunk('t1-1', 'pending', 4, 6), conflict]);
    await review.listAll();
    const context = () => calls.filter((c) => c.method === 'executeCommand' && c.args[1] === 'tether.editorHasChanges').at(-1)?.args[2];
    const lenses = () => codeLensProviders[0].provideCodeLenses({ uri: Uri.parse(A) }).map((l) => `${(l.range as { startLine: number }).startLine}:${l.command!.title}>${l.command!.command}`);
    assert.deepEqual(lenses(), [
      '0:$(check-all) Keep all 2 Tether changes>tether.keepFileChanges',
      '0:$(discard) Undo all>tether.undoFileChanges',
      '0:$(warning) Changed since: change t1-2>tether.undoConflictChange',
      '0:$(check) Keep as is>tether.keepChange',
      '0:$(discard) Undo (conflict: your edits in these lines)>tether.undoConflictChange',
      '4:$(check) Keep>tether.keepChange',
      '4:$(discard) Undo>tether.undoChange',
    ]);
    // Only the conflict left: the file-level commands stay.
    relist([hunk('t1-1', 'kept', 4, 6), conflict]);
    await review.listAll();
    assert.equal(context(), true, 'Keep All in File and the keys stay while a conflict waits');
    assert.deepEqual(lenses().filter((l) => l.includes('Keep as is')).length, 1);
    // Undo on it (from any place that names it) explains, and sends no undo the daemon refuses.
    warningAnswers.push('Keep As Is');
    rpc.replies['tether/keepChanges'] = () => ({ kept: ['t1-2'] });
    await review.commands()['tether.undoChange']({ uri: A, hunkIds: ['t1-2'] });
    const why = calls.find((c) => c.method === 'showWarningMessage')!;
    assert.match(String(why.args[0]), /cannot undo "change t1-2" in calc\/ops\.py: its lines were changed since/);
    assert.match((why.args[1] as { detail: string }).detail, /They were:\n\n    return a \+ b$/);
    assert.equal(rpc.sent.some((m) => m.method === 'tether/undoChanges'), false);
    assert.deepEqual(rpc.sent.find((m) => m.method === 'tether/keepChanges')?.params, { sessionId: 's', hunkIds: ['t1-2'] }, '"Keep As Is" keeps it');
    visibleEditors.length = 0;
    editor.active = undefined;
    review.dispose();
  });

  it('keeps all of a file from its CodeLens, and lists again only the files a changes update names', async () => {
    const { rpc, review, relist } = setUp([hunk('t1-1', 'pending', 4, 6), hunk('t1-2', 'pending', 13, 14)]);
    await review.listAll();
    rpc.replies['tether/keepChanges'] = () => ({ kept: ['t1-1', 't1-2'] });
    relist([hunk('t1-1', 'kept', 4, 6), hunk('t1-2', 'kept', 13, 14)]);
    await review.commands()['tether.keepFileChanges']({ uri: A });
    assert.deepEqual(rpc.sent.find((m) => m.method === 'tether/keepChanges')?.params, { sessionId: 's', uri: A });
    assert.equal(review.index.pending(A).length, 0);
    assert.equal(calls.filter((c) => c.method === 'showErrorMessage').length, 0);
    rpc.sent.length = 0;
    review.onSessionUpdate({ sessionId: 's', turnId: '', update: { kind: 'changes', turnIds: ['t1'], uris: [A] } });
    review.onSessionUpdate({ sessionId: 'other', turnId: '', update: { kind: 'changes', turnIds: ['x'], uris: ['file:///w/x.py'] } });
    await new Promise((r) => setTimeout(r, 0));
    assert.deepEqual(rpc.sent.map((m) => m.params), [{ sessionId: 's', uri: A, states: ['pending', 'kept', 'undone'] }]);
    review.dispose();
  });

  it('the Changes view counts each turn\'s and file\'s hunks and lists them with their actions', async () => {
    const { review } = setUp([hunk('t1-1', 'undone', 4, 5), hunk('t1-2', 'kept', 13, 14), hunk('t1-3', 'pending', 20, 21)]);
    const tracker = new ChangeTracker();
    tracker.apply('s', 't1', { kind: 'user_message', content: [{ type: 'text', text: 'tidy' }] });
    tracker.apply('s', 't1', { kind: 'tool_call_update', toolCallId: 'e', content: [{ type: 'diff', uri: A, oldText: 'a\n', newText: 'b\n' }] });
    const view = new ChangesView(tracker, new DiffDocuments(), { activeSession: () => 's', rewind: async () => [] }, review);
    await review.listAll();
    const [turn] = view.getChildren();
    assert.equal(view.getTreeItem(turn).description, '1 file · 1 pending · 1 kept · 1 undone · running');
    const [file] = view.getChildren(turn);
    const fileItem = view.getTreeItem(file);
    assert.equal(fileItem.description, 'calc · +6 −3 · 1 pending · 1 kept · 1 undone');
    assert.equal(fileItem.contextValue, 'tetherFilePending');
    const hunks = view.getChildren(file).map((n) => view.getTreeItem(n));
    assert.deepEqual(hunks.map((h) => [h.label, h.description, h.contextValue]), [
      ['Line 5', 'undone · change t1-1', 'tetherHunkUndone'],
      ['Line 14', 'kept · change t1-2', 'tetherHunkKept'],
      ['Line 21', 'pending · change t1-3', 'tetherHunkPending'],
    ]);
    view.dispose();
    review.dispose();
  });
});
