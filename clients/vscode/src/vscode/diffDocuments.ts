/**
 * Read-only virtual documents holding texts that exist nowhere on disk (a file before the
 * agent's turn, a proposed change), so VS Code's own diff editor can show them.
 */
import * as vscode from 'vscode';

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

  /** Diff `before` (null: the file did not exist) against `after` (a text or a real file). */
  async openDiff(fileUri: string, before: string | null, after: string | vscode.Uri, title: string): Promise<void> {
    const left = this.put(before ?? '', fileUri, 'before');
    const right = typeof after === 'string' ? this.put(after, fileUri, 'proposed') : after;
    await vscode.commands.executeCommand('vscode.diff', left, right, title, { preview: true, preserveFocus: false });
  }

  dispose(): void {
    this.registration.dispose();
    this.texts.clear();
  }
}
