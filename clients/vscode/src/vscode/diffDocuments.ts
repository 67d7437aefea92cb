/**
 * Read-only virtual documents holding texts that exist nowhere on disk (a file before the
 * agent's turn, a proposed change), so VS Code's own diff editor can show them.
 */
import * as vscode from 'vscode';
import { DiffLike, regionLabel, wholeTexts } from '../core/diffRegion';

export const SCHEME = 'tether-text';

export class DiffDocuments implements vscode.TextDocumentContentProvider, vscode.Disposable {
  private readonly texts = new Map<string, string>();
  private next = 1;
  private readonly registration: vscode.Disposable;

  constructor() {
    this.registration = vscode.workspace.registerTextDocumentContentProvider(SCHEME, this);
  }

  provideTextDocumentContent(uri: vscode.Uri): string {
    return this.texts.get(uri.query) ?? '';
  }

  /** A URI whose document reads `text`. It keeps the file's path, so the language, the
   * icons and the multi-file diff (which pairs sides by path) treat it as that file. */
  put(text: string, fileUri: string, label: string): vscode.Uri {
    const key = `${label}-${this.next++}`;
    this.texts.set(key, text);
    return vscode.Uri.from({ scheme: SCHEME, path: vscode.Uri.parse(fileUri).path, query: key });
  }

  /** Diff `before` (null: the file did not exist) against `after` (a text or a real file).
   * Resolves with the right side's URI (what `closeDiffs` takes). */
  async openDiff(fileUri: string, before: string | null, after: string | vscode.Uri, title: string): Promise<vscode.Uri> {
    const left = this.put(before ?? '', fileUri, 'before');
    const right = typeof after === 'string' ? this.put(after, fileUri, 'proposed') : after;
    await vscode.commands.executeCommand('vscode.diff', left, right, title, { preview: true, preserveFocus: false });
    return right;
  }

  /** Close the diff editors whose right side is one of `rights` (opened by `openDiff`). */
  async closeDiffs(rights: vscode.Uri[]): Promise<void> {
    const wanted = new Set(rights.map((u) => u.toString()));
    const tabs = vscode.window.tabGroups.all
      .flatMap((g) => g.tabs)
      .filter((t) => t.input instanceof vscode.TabInputTextDiff && wanted.has(t.input.modified.toString()));
    if (tabs.length) await vscode.window.tabGroups.close(tabs, true);
  }

  /** Open a tool's diff. A big file's diff is a region: it is put back into the file as the
   * editor has it now (`holds`: the side the file should show), so the diff editor shows
   * the whole file with the right line numbers; when the file no longer matches, the
   * region alone. */
  async openToolDiff(fileUri: string, diff: DiffLike, holds: 'old' | 'new', title: string): Promise<vscode.Uri> {
    if (diff.line === undefined) return this.openDiff(fileUri, diff.oldText ?? null, diff.newText, title);
    const whole = wholeTexts(diff, await currentText(fileUri), holds);
    if (whole) return this.openDiff(fileUri, whole.before, whole.after, title);
    return this.openDiff(fileUri, diff.oldText ?? '', diff.newText, `${title}, ${regionLabel(diff)}`);
  }

  dispose(): void {
    this.registration.dispose();
    this.texts.clear();
  }
}

/** The text of a file as the editor has it (an open buffer), else on disk. */
export async function currentText(fileUri: string): Promise<string | undefined> {
  const uri = vscode.Uri.parse(fileUri);
  const open = vscode.workspace.textDocuments.find((d) => d.uri.toString() === uri.toString());
  if (open) return open.getText();
  try {
    return new TextDecoder().decode(await vscode.workspace.fs.readFile(uri));
  } catch {
    return undefined;
  }
}
