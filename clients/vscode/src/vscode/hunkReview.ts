/**
 * A turn's changes reviewed where they are: the pending hunks of the active session
 * decorated in the editors (gutter, background and overview ruler in the theme's diff
 * colours, the turn's old lines in the hover), Keep / Undo per hunk and Keep all / Undo all
 * per file as CodeLenses, commands to move between hunks and to keep or undo the one under
 * the cursor. The daemon owns the change set (`tether/listChanges`, `keepChanges`,
 * `undoChanges`); an undo arrives as one versioned `workspace/applyEdit`, so Ctrl+Z takes it
 * back. A file is listed again when a `changes` update names it and after the user typed
 * in it (the daemon then sees an undo done by hand or with Ctrl+Z).
 */
import * as vscode from 'vscode';
import { HunkIndex, isEmpty, lastLine, linesLabel, notDoneMessage } from '../core/hunks';
import { TetherApi } from '../core/rpc';
import { uriKey } from '../core/uri';
import { HUNK_STATES, Hunk, HunkSelection, NotDone, SessionUpdateParams } from '../core/wire';

/** How long typing in a changed file waits before the file is listed again. */
const RELIST_MS = 300;

export interface HunkReviewDeps {
  api(): TetherApi | null;
  sessionId(): string | null;
  output: vscode.LogOutputChannel;
  extensionUri: vscode.Uri;
}

/** A CodeLens's or a tree item's argument: which hunks of which file. */
export interface HunkTarget {
  uri: string;
  hunkIds?: string[];
  /** Without `hunkIds`: only this turn's hunks of the file. */
  turnId?: string;
}

export type HunkCommand =
  | 'tether.nextChange'
  | 'tether.previousChange'
  | 'tether.keepChange'
  | 'tether.undoChange'
  | 'tether.keepFileChanges'
  | 'tether.undoFileChanges'
  | 'tether.undoConflictChange';

export class HunkReview implements vscode.CodeLensProvider, vscode.Disposable {
  readonly index = new HunkIndex();
  private readonly changed = new vscode.EventEmitter<void>();
  /** The change set was listed again (the Changes view redraws). */
  readonly onDidChange = this.changed.event;
  private readonly lensesChanged = new vscode.EventEmitter<void>();
  readonly onDidChangeCodeLenses = this.lensesChanged.event;
  private readonly added: vscode.TextEditorDecorationType;
  private readonly removed: vscode.TextEditorDecorationType;
  private readonly disposables: vscode.Disposable[] = [];
  private readonly relist = new Map<string, ReturnType<typeof setTimeout>>();
  /** Each listing's number, per file ('' for the whole session): a late answer is dropped. */
  private readonly generation = new Map<string, number>();

  constructor(private readonly deps: HunkReviewDeps) {
    const media = (name: string) => vscode.Uri.joinPath(deps.extensionUri, 'media', name);
    this.added = vscode.window.createTextEditorDecorationType({
      isWholeLine: true,
      backgroundColor: new vscode.ThemeColor('diffEditor.insertedLineBackground'),
      overviewRulerColor: new vscode.ThemeColor('editorOverviewRuler.addedForeground'),
      overviewRulerLane: vscode.OverviewRulerLane.Left,
      gutterIconPath: media('change-added.svg'),
      gutterIconSize: 'contain',
    });
    this.removed = vscode.window.createTextEditorDecorationType({
      isWholeLine: true,
      borderStyle: 'solid',
      borderWidth: '2px 0 0 0',
      borderColor: new vscode.ThemeColor('editorGutter.deletedBackground'),
      overviewRulerColor: new vscode.ThemeColor('editorOverviewRuler.deletedForeground'),
      overviewRulerLane: vscode.OverviewRulerLane.Left,
      gutterIconPath: media('change-removed.svg'),
      gutterIconSize: 'contain',
    });
    this.disposables.push(
      this.added,
      this.removed,
      this.changed,
      this.lensesChanged,
      vscode.languages.registerCodeLensProvider({ scheme: 'file' }, this),
      vscode.window.onDidChangeVisibleTextEditors(() => this.render()),
      vscode.window.onDidChangeActiveTextEditor(() => this.setContext()),
      vscode.workspace.onDidChangeTextDocument((e) => {
        if (e.contentChanges.length && this.index.has(e.document.uri.toString())) this.scheduleRelist(e.document.uri.toString());
      }),
    );
  }

  /** The commands, by id. */
  commands(): Record<HunkCommand, (arg?: unknown) => unknown> {
    return {
      'tether.nextChange': () => this.move(1),
      'tether.previousChange': () => this.move(-1),
      'tether.keepChange': (arg) => this.onHunk('keep', arg),
      'tether.undoChange': (arg) => this.onHunk('undo', arg),
      'tether.keepFileChanges': (arg) => this.onFile('keep', arg),
      'tether.undoFileChanges': (arg) => this.onFile('undo', arg),
      'tether.undoConflictChange': (arg) => this.explainConflict(asTarget(arg)),
    };
  }

  /** A live session update: a `changes` update of the active session lists its files again. */
  onSessionUpdate(params: SessionUpdateParams): void {
    const update = params.update;
    if (update.kind !== 'changes' || params.sessionId !== this.deps.sessionId()) return;
    if (update.uris.length === 0 || this.index.sessionId !== params.sessionId) void this.listAll();
    else for (const uri of update.uris) void this.listFile(uri);
  }

  /** The active session changed (new, resumed, reloaded) or the daemon (re)started: list its
   * whole change set. */
  async listAll(): Promise<void> {
    const api = this.deps.api();
    const sessionId = this.deps.sessionId();
    const generation = this.bump('');
    if (!api || !sessionId) {
      this.index.reset(null);
      this.show();
      return;
    }
    try {
      const listing = await api.listChanges(sessionId, { states: [...HUNK_STATES] });
      if (generation !== this.generation.get('') || sessionId !== this.deps.sessionId()) return;
      this.index.reset(sessionId, listing);
    } catch (error) {
      this.deps.output.warn(`Could not list the session's changes: ${message(error)}`);
      this.index.reset(null);
    }
    this.show();
  }

  private async listFile(uri: string): Promise<void> {
    const api = this.deps.api();
    const sessionId = this.deps.sessionId();
    if (!api || !sessionId || this.index.sessionId !== sessionId) return;
    const key = uriKey(uri);
    const generation = this.bump(key);
    try {
      const listing = await api.listChanges(sessionId, { uri, states: [...HUNK_STATES] });
      if (generation !== this.generation.get(key) || this.index.sessionId !== sessionId) return;
      this.index.replaceFile(uri, listing);
    } catch (error) {
      this.deps.output.warn(`Could not list the changes of ${uri}: ${message(error)}`);
      return;
    }
    this.show();
  }

  private bump(key: string): number {
    const next = (this.generation.get(key) ?? 0) + 1;
    this.generation.set(key, next);
    return next;
  }

  private scheduleRelist(uri: string): void {
    const key = uriKey(uri);
    clearTimeout(this.relist.get(key));
    this.relist.set(
      key,
      setTimeout(() => {
        this.relist.delete(key);
        void this.listFile(uri);
      }, RELIST_MS),
    );
  }

  private show(): void {
    this.render();
    this.setContext();
    this.lensesChanged.fire();
    this.changed.fire();
  }

  private render(): void {
    for (const editor of vscode.window.visibleTextEditors) {
      if (editor.document.uri.scheme !== 'file') continue;
      const hunks = this.index.pending(editor.document.uri.toString());
      const decoration = (h: Hunk): vscode.DecorationOptions => ({ range: lineRange(h), hoverMessage: hover(h) });
      editor.setDecorations(this.added, hunks.filter((h) => !isEmpty(h.range!)).map(decoration));
      editor.setDecorations(this.removed, hunks.filter((h) => isEmpty(h.range!)).map(decoration));
    }
  }

  private setContext(): void {
    const uri = vscode.window.activeTextEditor?.document.uri.toString();
    // Conflicts too: "Keep All in File" and the keys stay while any hunk waits for review.
    void vscode.commands.executeCommand('setContext', 'tether.editorHasChanges', uri !== undefined && this.index.reviewable(uri).length > 0);
  }

  provideCodeLenses(document: vscode.TextDocument): vscode.CodeLens[] {
    const uri = document.uri.toString();
    const hunks = this.index.pending(uri);
    const conflicts = this.index.conflicts(uri);
    const lenses: vscode.CodeLens[] = [];
    const top = new vscode.Range(0, 0, 0, 0);
    const count = hunks.length + conflicts.length;
    if (count > 1) {
      const file: HunkTarget = { uri };
      lenses.push(
        new vscode.CodeLens(top, { title: `$(check-all) Keep all ${count} Tether changes`, command: 'tether.keepFileChanges', arguments: [file], tooltip: 'Keep every pending change Tether made to this file' }),
        new vscode.CodeLens(top, { title: '$(discard) Undo all', command: 'tether.undoFileChanges', arguments: [file], tooltip: 'Put every pending change Tether made to this file back as it was (changes whose lines you edited since stay)' }),
      );
    }
    // A change whose lines were edited since has no place in the file: its actions go on top.
    for (const hunk of conflicts) {
      const target: HunkTarget = { uri, hunkIds: [hunk.hunkId] };
      lenses.push(
        new vscode.CodeLens(top, { title: `$(warning) Changed since: ${hunk.summary}`, command: 'tether.undoConflictChange', arguments: [target], tooltip: CONFLICT_TOOLTIP }),
        new vscode.CodeLens(top, { title: '$(check) Keep as is', command: 'tether.keepChange', arguments: [target], tooltip: `Keep this change with your edits in its lines (${hunk.summary})` }),
        new vscode.CodeLens(top, { title: `$(discard) ${CONFLICT_UNDO}`, command: 'tether.undoConflictChange', arguments: [target], tooltip: CONFLICT_TOOLTIP }),
      );
    }
    for (const hunk of hunks) {
      const at = new vscode.Range(hunk.range!.start.line, 0, hunk.range!.start.line, 0);
      const target: HunkTarget = { uri, hunkIds: [hunk.hunkId] };
      lenses.push(
        new vscode.CodeLens(at, { title: '$(check) Keep', command: 'tether.keepChange', arguments: [target], tooltip: `Keep this change (${hunk.summary})` }),
        new vscode.CodeLens(at, { title: '$(discard) Undo', command: 'tether.undoChange', arguments: [target], tooltip: `Undo this change (${hunk.summary})` }),
      );
    }
    return lenses;
  }

  /** "Undo" on a change whose lines were edited since: it cannot be undone (nothing is
   * merged), so say why, show what the lines were, and offer to keep it as it is. */
  async explainConflict(target: HunkTarget | undefined): Promise<void> {
    const hunks = (target?.hunkIds ?? []).flatMap((id) => {
      const ref = this.index.find(id);
      return ref ? [ref] : [];
    });
    const [first] = hunks;
    if (!target || !first) {
      void vscode.window.showInformationMessage('Tether: that change is no longer pending.');
      return;
    }
    const before = first.hunk.oldText === '' ? '(no lines: the turn added them)' : first.hunk.oldText.replace(/\n$/, '');
    const picked = await vscode.window.showWarningMessage(
      `Tether cannot undo "${first.hunk.summary}" in ${where(first.uri)}: its lines were changed since the turn made them (your edits, or a later turn's).`,
      {
        modal: true,
        detail: `Nothing is merged. To undo it, undo the later edits first (Ctrl+Z, or Undo on the later turn's change), or put the lines back by hand. They were:\n\n${before}`,
      },
      KEEP_AS_IS,
    );
    if (picked === KEEP_AS_IS) await this.act('keep', first.uri, { hunkIds: hunks.map((h) => h.hunk.hunkId) });
  }

  /** Move the cursor to the next (previous) pending change: in this file, then the next file's. */
  private async move(direction: 1 | -1): Promise<void> {
    const editor = vscode.window.activeTextEditor;
    const from = editor?.document.uri.toString();
    const line = editor ? editor.selection.active.line : -1;
    const target = from ? this.index.step(from, line, direction) : this.firstPending();
    if (!target) {
      void vscode.window.showInformationMessage('Tether: no pending changes to review in this session.');
      return;
    }
    const start = new vscode.Position(target.hunk.range!.start.line, 0);
    const shown = from && uriKey(from) === uriKey(target.uri) ? editor! : await vscode.window.showTextDocument(vscode.Uri.parse(target.uri));
    shown.selection = new vscode.Selection(start, start);
    shown.revealRange(new vscode.Range(start, new vscode.Position(lastLine(target.hunk.range!), 0)), vscode.TextEditorRevealType.InCenterIfOutsideViewport);
  }

  private firstPending(): { uri: string; hunk: Hunk } | undefined {
    for (const file of this.index.all()) {
      const [hunk] = this.index.pending(file.uri);
      if (hunk) return { uri: file.uri, hunk };
    }
    return undefined;
  }

  /** Keep or undo the hunks `arg` names (a CodeLens, the Changes view), else the pending one
   * under the cursor. */
  private async onHunk(verb: Verb, arg: unknown): Promise<void> {
    const target = asTarget(arg);
    if (verb === 'undo' && target?.hunkIds?.some((id) => this.index.find(id)?.hunk.conflict)) return this.explainConflict(target);
    if (target?.hunkIds?.length) return this.act(verb, target.uri, { hunkIds: target.hunkIds });
    const editor = vscode.window.activeTextEditor;
    const uri = editor?.document.uri.toString();
    const hunk = uri && editor ? this.index.at(uri, editor.selection.active.line) : undefined;
    if (!uri || !hunk) {
      void vscode.window.showInformationMessage(`Tether: the cursor is not on a pending change (move to one with "Tether: Next Change").`);
      return;
    }
    return this.act(verb, uri, { hunkIds: [hunk.hunkId] });
  }

  /** Keep or undo every pending hunk of a file (`arg`, else the active editor's). */
  private async onFile(verb: Verb, arg: unknown): Promise<void> {
    const target = asTarget(arg);
    const uri = target?.uri ?? vscode.window.activeTextEditor?.document.uri.toString();
    const turnId = target?.turnId;
    if (!uri || !this.index.reviewable(uri).some((h) => turnId === undefined || h.turnId === turnId)) {
      void vscode.window.showInformationMessage('Tether: this file has no pending changes.');
      return;
    }
    return this.act(verb, uri, turnId === undefined ? { uri } : { uri, turnId });
  }

  /** Keep or undo; a hunk the daemon refuses (a conflict) is an error naming its file and lines. */
  async act(verb: Verb, uri: string, which: HunkSelection): Promise<void> {
    const api = this.deps.api();
    const sessionId = this.deps.sessionId();
    if (!api || !sessionId) {
      void vscode.window.showWarningMessage('Tether is not running: start it to review its changes.');
      return;
    }
    // Named as the user last saw them, before the listing after the action replaces them.
    const known = new Map((which.hunkIds ?? this.index.file(uri)?.hunks.map((h) => h.hunkId) ?? []).flatMap((id) => {
      const ref = this.index.find(id);
      return ref ? [[id, ref.hunk] as const] : [];
    }));
    let notDone: NotDone[] = [];
    try {
      if (verb === 'keep') notDone = (await api.keepChanges(sessionId, which)).notKept ?? [];
      else notDone = (await api.undoChanges(sessionId, which)).notUndone ?? [];
    } catch (error) {
      void vscode.window.showErrorMessage(`Tether could not ${verb} the change in ${where(uri)}: ${message(error)}`);
      return;
    } finally {
      await this.listFile(uri);
    }
    if (notDone.length) void vscode.window.showErrorMessage(notDoneMessage(verb, notDone, (id) => known.get(id), where));
  }

  dispose(): void {
    for (const timer of this.relist.values()) clearTimeout(timer);
    this.disposables.forEach((d) => d.dispose());
  }
}

type Verb = 'keep' | 'undo';

/** The action a change in conflict offers instead of Undo: it explains. */
export const CONFLICT_UNDO = 'Undo (conflict: your edits in these lines)';
const KEEP_AS_IS = 'Keep As Is';
const CONFLICT_TOOLTIP = 'Its lines were changed since the turn made them, so Tether cannot undo it: click to see why and what the lines were';

function asTarget(arg: unknown): HunkTarget | undefined {
  if (typeof arg !== 'object' || arg === null) return undefined;
  const { uri, hunkIds, turnId } = arg as { uri?: unknown; hunkIds?: unknown; turnId?: unknown };
  if (typeof uri !== 'string') return undefined;
  const ids = Array.isArray(hunkIds) ? hunkIds.filter((id): id is string => typeof id === 'string') : undefined;
  return { uri, hunkIds: ids, turnId: typeof turnId === 'string' ? turnId : undefined };
}

function lineRange(hunk: Hunk): vscode.Range {
  const r = hunk.range!;
  return new vscode.Range(r.start.line, 0, lastLine(r), 0);
}

/** The change as a diff in the hover: what the lines were before the turn. */
function hover(hunk: Hunk): vscode.MarkdownString {
  const lines = (text: string, sign: string) => (text === '' ? [] : text.replace(/\n$/, '').split('\n').map((l) => `${sign}${l}`));
  const diff = [...lines(hunk.oldText, '-'), ...lines(hunk.newText, '+')].join('\n');
  const md = new vscode.MarkdownString(`**Tether** changed ${linesLabel(hunk.range)}: ${hunk.summary}\n\n`);
  md.appendCodeblock(diff, 'diff');
  return md;
}

function where(uri: string): string {
  return vscode.workspace.asRelativePath(vscode.Uri.parse(uri));
}

function message(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}
