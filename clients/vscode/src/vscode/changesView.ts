/**
 * "Changes" view: the files each turn of the active session changed, a diff per file
 * (before the turn ↔ after it: a later turn's edits are not this turn's), "Review changes"
 * for a whole turn and "Undo turn".
 */
import * as vscode from 'vscode';
import { regionLabel } from '../core/diffRegion';
import { basename, diffStat, truncate } from '../core/format';
import { ChangeTracker, FileChange, TurnChanges } from '../core/turns';
import { currentText, DiffDocuments } from './diffDocuments';

type Node = { turn: TurnChanges } | { turn: TurnChanges; file: FileChange };

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
  ) {
    this.disposables.push(tracker.onDidChange(() => this.refresh()));
  }

  /** The view's commands, by id (the tree view itself is registered at activation). */
  commands(): Record<'tether.openChange' | 'tether.reviewTurn' | 'tether.undoTurn', (arg?: unknown) => unknown> {
    return {
      'tether.openChange': (node) => isNode(node) && 'file' in node && this.openFile(node.turn, node.file),
      'tether.reviewTurn': (arg) => this.review(this.turnOf(isNode(arg) || typeof arg === 'string' ? arg : undefined)),
      'tether.undoTurn': (arg) => this.undo(this.turnOf(isNode(arg) || typeof arg === 'string' ? arg : undefined)),
    };
  }

  refresh(): void {
    this.emitter.fire(undefined);
  }

  getChildren(node?: Node): Node[] {
    if (!node) return this.turns().map((turn) => ({ turn }));
    if ('file' in node) return [];
    return node.turn.files.map((file) => ({ turn: node.turn, file }));
  }

  getTreeItem(node: Node): vscode.TreeItem {
    if ('file' in node) {
      const uri = vscode.Uri.parse(node.file.uri);
      const stat = diffStat(node.file.before, node.file.after);
      const item = new vscode.TreeItem(basename(node.file.uri));
      item.resourceUri = uri;
      const dir = vscode.workspace.asRelativePath(uri).split('/').slice(0, -1).join('/');
      item.description = `${dir ? `${dir} ` : ''}+${stat.added} −${stat.removed}${node.file.before === null ? ' (new)' : ''}`;
      item.command = { command: 'tether.openChange', title: 'Open Changes', arguments: [node] };
      item.contextValue = 'tetherFile';
      return item;
    }
    const turn = node.turn;
    const latest = this.turns()[0] === turn;
    const item = new vscode.TreeItem(
      truncate(turn.prompt || `Turn ${turn.turnId}`, 60),
      latest ? vscode.TreeItemCollapsibleState.Expanded : vscode.TreeItemCollapsibleState.Collapsed,
    );
    item.description = `${turn.files.length} file${turn.files.length === 1 ? '' : 's'}${turn.finished ? '' : ' · running'}`;
    item.tooltip = turn.prompt;
    item.iconPath = new vscode.ThemeIcon('history');
    // Only turns whose checkpoint the daemon holds can be undone.
    item.contextValue = turn.rewindable ? 'tetherTurn' : 'tetherTurnKept';
    return item;
  }

  private turns(): TurnChanges[] {
    const session = this.hooks.activeSession();
    return session ? this.tracker.list(session) : [];
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

function isNode(value: unknown): value is Node {
  return typeof value === 'object' && value !== null && 'turn' in value;
}
