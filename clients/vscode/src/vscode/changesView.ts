/**
 * "Changes" view: the files each turn of the active session changed, a diff per file
 * (before the turn ↔ after it: a later turn's edits are not this turn's), "Review changes"
 * for a whole turn (the multi-file diff editor) and "Undo turn"; with the daemon's change
 * set, each turn's and file's pending/kept/undone counts and each hunk with Keep / Undo.
 */
import * as vscode from 'vscode';
import { regionLabel } from '../core/diffRegion';
import { basename, diffStat, truncate } from '../core/format';
import { countHunks, countLabel, linesLabel } from '../core/hunks';
import { ChangeTracker, FileChange, TurnChanges } from '../core/turns';
import { uriKey } from '../core/uri';
import { Hunk } from '../core/wire';
import { currentText, DiffDocuments } from './diffDocuments';
import { HunkReview } from './hunkReview';

/** A turn; a file it changed (`file`: the diff this client saw, absent for a file only the
 * daemon's change set names); one of its hunks. File and hunk nodes carry `uri` (and
 * `turnId`, `hunkIds`): the argument the keep/undo commands take. */
type TurnNode = { turn: TurnChanges };
type FileNode = { turn: TurnChanges; uri: string; turnId: string; file?: FileChange; hunks: Hunk[] };
type HunkNode = { turn: TurnChanges; uri: string; hunkIds: [string]; hunk: Hunk };
type Node = TurnNode | FileNode | HunkNode;

export interface ChangesHooks {
  activeSession(): string | null;
  /** Rewind the active session to before `turnId`; resolves with the restored URIs. */
  rewind(turnId: string): Promise<string[]>;
}

export class ChangesView implements vscode.TreeDataProvider<Node>, vscode.Disposable {
  private readonly emitter = new vscode.EventEmitter<Node | undefined>();
  readonly onDidChangeTreeData = this.emitter.event;
  private readonly disposables: vscode.Disposable[] = [];

  constructor(
    private readonly tracker: ChangeTracker,
    private readonly diffs: DiffDocuments,
    private readonly hooks: ChangesHooks,
    private readonly hunks: HunkReview,
  ) {
    this.disposables.push(tracker.onDidChange(() => this.refresh()), hunks.onDidChange(() => this.refresh()));
  }

  /** The view's commands, by id (the tree view itself is registered at activation). */
  commands(): Record<'tether.openChange' | 'tether.reviewTurn' | 'tether.undoTurn', (arg?: unknown) => unknown> {
    return {
      'tether.openChange': (node) => isNode(node) && this.open(node),
      'tether.reviewTurn': (arg) => this.review(this.turnOf(isNode(arg) || typeof arg === 'string' ? arg : undefined)),
      'tether.undoTurn': (arg) => this.undo(this.turnOf(isNode(arg) || typeof arg === 'string' ? arg : undefined)),
    };
  }

  refresh(): void {
    this.emitter.fire(undefined);
  }

  getChildren(node?: Node): Node[] {
    if (!node) return this.turns().map((turn) => ({ turn }));
    if ('hunk' in node) return [];
    if ('hunks' in node) return node.hunks.map((hunk) => ({ turn: node.turn, uri: node.uri, hunkIds: [hunk.hunkId], hunk }));
    return this.files(node.turn);
  }

  /** A turn's files: those this client saw it change, then those only the change set names. */
  private files(turn: TurnChanges): FileNode[] {
    const listed = this.hunks.index.turnFiles(turn.turnId);
    const hunksOf = (uri: string) => listed.find((f) => uriKey(f.uri) === uriKey(uri))?.hunks ?? [];
    const seen = turn.files.map((file) => ({ turn, uri: file.uri, turnId: turn.turnId, file, hunks: hunksOf(file.uri) }));
    const known = new Set(turn.files.map((f) => uriKey(f.uri)));
    const more = listed.filter((f) => !known.has(uriKey(f.uri))).map((f) => ({ turn, uri: f.uri, turnId: turn.turnId, hunks: f.hunks }));
    return [...seen, ...more];
  }

  getTreeItem(node: Node): vscode.TreeItem {
    if ('hunk' in node) return hunkItem(node);
    if ('hunks' in node) {
      const uri = vscode.Uri.parse(node.uri);
      const counts = countHunks(node.hunks);
      const item = new vscode.TreeItem(
        basename(node.uri),
        node.hunks.length === 0 ? vscode.TreeItemCollapsibleState.None : counts.pending || counts.conflicts ? vscode.TreeItemCollapsibleState.Expanded : vscode.TreeItemCollapsibleState.Collapsed,
      );
      item.resourceUri = uri;
      const dir = vscode.workspace.asRelativePath(uri).split('/').slice(0, -1).join('/');
      // Lines added and removed: the hunks' when the daemon listed them, else the diff's.
      const stat = node.hunks.length ? hunkStat(node.hunks) : node.file ? diffStat(node.file.before, node.file.after) : undefined;
      const isNew = node.file?.before === null;
      const parts = [dir, stat ? `+${stat.added} −${stat.removed}${isNew ? ' (new)' : ''}` : '', countLabel(counts)].filter(Boolean);
      item.description = parts.join(' · ');
      item.command = { command: 'tether.openChange', title: 'Open Changes', arguments: [node] };
      item.contextValue = counts.pending || counts.conflicts ? 'tetherFilePending' : 'tetherFile';
      // A new id once the change set lists the file's hunks: the row then opens expanded.
      item.id = `${node.turnId}|${uriKey(node.uri)}${node.hunks.length ? '|hunks' : ''}`;
      return item;
    }
    const turn = node.turn;
    const latest = this.turns()[0] === turn;
    const item = new vscode.TreeItem(
      truncate(turn.prompt || `Turn ${turn.turnId}`, 60),
      latest ? vscode.TreeItemCollapsibleState.Expanded : vscode.TreeItemCollapsibleState.Collapsed,
    );
    const files = this.files(turn).length;
    const counts = countLabel(countHunks(this.hunks.index.turnFiles(turn.turnId).flatMap((f) => f.hunks)));
    item.description = `${files} file${files === 1 ? '' : 's'}${counts ? ` · ${counts}` : ''}${turn.finished ? '' : ' · running'}`;
    item.tooltip = turn.prompt;
    item.iconPath = new vscode.ThemeIcon('history');
    // Only turns whose checkpoint the daemon holds can be undone.
    item.contextValue = turn.rewindable ? 'tetherTurn' : 'tetherTurnKept';
    return item;
  }

  private turns(): TurnChanges[] {
    const session = this.hooks.activeSession();
    if (!session) return [];
    const listed = this.hunks.index.sessionId === session ? new Set(this.hunks.index.countsByTurn().keys()) : new Set<string>();
    return this.tracker.listWith(session, listed);
  }

  private async open(node: Node): Promise<void> {
    if ('hunk' in node) {
      const r = node.hunk.range;
      const selection = r ? new vscode.Range(r.start.line, 0, r.start.line, 0) : undefined;
      await vscode.window.showTextDocument(vscode.Uri.parse(node.uri), { selection, preview: true });
      return;
    }
    if ('hunks' in node) {
      if (node.file) await this.openFile(node.turn, node.file);
      else await vscode.window.showTextDocument(vscode.Uri.parse(node.uri), { preview: true });
    }
  }

  private turnOf(arg?: Node | string): TurnChanges | undefined {
    if (arg && typeof arg === 'object') return arg.turn;
    const session = this.hooks.activeSession();
    if (typeof arg === 'string' && session) return this.tracker.find(session, arg);
    return this.turns()[0];
  }

  private async openFile(turn: TurnChanges, file: FileChange): Promise<void> {
    const name = vscode.workspace.asRelativePath(vscode.Uri.parse(file.uri));
    const region = file.line === undefined ? '' : `, ${regionLabel({ newText: file.after, line: file.line })}`;
    await this.diffs.openDiff(file.uri, file.before, await this.afterSide(file), `${name} (changes of: ${truncate(turn.prompt, 30)}${region})`);
  }

  /** The right side of a turn's diff: the file itself while it still reads as the turn left
   * it (so it can be edited right there), else the text the turn left. */
  private async afterSide(file: FileChange): Promise<vscode.Uri> {
    const now = await currentText(file.uri);
    return now === file.after ? vscode.Uri.parse(file.uri) : this.diffs.put(file.after, file.uri, 'after');
  }

  async review(turn: TurnChanges | undefined): Promise<void> {
    if (!turn || turn.files.length === 0) {
      void vscode.window.showInformationMessage('Tether has not changed any files in this session yet.');
      return;
    }
    const resources = await Promise.all(
      turn.files.map(async (f) => [vscode.Uri.parse(f.uri), this.diffs.put(f.before ?? '', f.uri, 'before'), await this.afterSide(f)] as const),
    );
    try {
      // The multi-file diff editor; older VS Code lacks the command, then one diff per file.
      await vscode.commands.executeCommand('vscode.changes', `Tether: ${truncate(turn.prompt, 40)}`, resources);
    } catch {
      for (const f of turn.files) await this.openFile(turn, f);
    }
  }

  async undo(turn: TurnChanges | undefined): Promise<void> {
    if (!turn) return;
    if (!turn.rewindable) {
      void vscode.window.showInformationMessage('Tether cannot undo this turn: the daemon that ran it kept no checkpoint of it.');
      return;
    }
    const files = turn.files.map((f) => vscode.workspace.asRelativePath(vscode.Uri.parse(f.uri))).join(', ');
    const ok = await vscode.window.showWarningMessage(
      `Undo the turn "${truncate(turn.prompt, 50)}"?`,
      { modal: true, detail: `Files changed by this turn and every later turn go back to how they were before it (${files || 'no files'}), and the conversation continues from before it.` },
      'Undo Turn',
    );
    if (ok !== 'Undo Turn') return;
    try {
      const restored = await this.hooks.rewind(turn.turnId);
      void vscode.window.showInformationMessage(`Tether: turn undone, ${restored.length} file${restored.length === 1 ? '' : 's'} restored.`);
    } catch (error) {
      void vscode.window.showErrorMessage(`Tether could not undo the turn: ${error instanceof Error ? error.message : String(error)}`);
    }
  }

  dispose(): void {
    this.disposables.forEach((d) => d.dispose());
    this.emitter.dispose();
  }
}

/** A hunk: its lines and summary; Keep / Undo (inline) by its state. */
function hunkItem(node: HunkNode): vscode.TreeItem {
  const hunk = node.hunk;
  const item = new vscode.TreeItem(hunk.range ? capitalise(linesLabel(hunk.range)) : 'Changed lines');
  const conflict = hunk.conflict && hunk.state === 'pending';
  const state = conflict ? 'conflict: your edits in these lines' : hunk.conflict && hunk.state === 'kept' ? 'kept, changed since' : hunk.state;
  item.description = `${state} · ${hunk.summary}`;
  item.tooltip = new vscode.MarkdownString().appendText(`${hunk.summary} (${state})`).appendCodeblock(
    [...lines(hunk.oldText, '-'), ...lines(hunk.newText, '+')].join('\n'),
    'diff',
  );
  item.iconPath = new vscode.ThemeIcon(conflict ? 'warning' : hunk.state === 'pending' ? 'circle-outline' : hunk.state === 'kept' ? 'check' : 'discard');
  item.command = { command: 'tether.openChange', title: 'Show the Change', arguments: [node] };
  item.id = hunk.hunkId;
  // A change in conflict: Keep (as is) and an Undo that explains why it cannot (package.json).
  item.contextValue = conflict ? 'tetherHunkConflict' : hunk.state === 'pending' ? 'tetherHunkPending' : hunk.state === 'kept' ? 'tetherHunkKept' : 'tetherHunkUndone';
  return item;
}

function hunkStat(hunks: Hunk[]): { added: number; removed: number } {
  const count = (text: string) => (text === '' ? 0 : text.replace(/\n$/, '').split('\n').length);
  return { added: hunks.reduce((n, h) => n + count(h.newText), 0), removed: hunks.reduce((n, h) => n + count(h.oldText), 0) };
}

function lines(text: string, sign: string): string[] {
  return text === '' ? [] : text.replace(/\n$/, '').split('\n').map((l) => `${sign}${l}`);
}

function capitalise(text: string): string {
  return text.charAt(0).toUpperCase() + text.slice(1);
}

function isNode(value: unknown): value is Node {
  return typeof value === 'object' && value !== null && 'turn' in value;
}
