/** Forwards the editor's diagnostics for files the agent touched as `tether/diagnostics`. */
import * as vscode from 'vscode';
import { EditorDiagnostic, baselineFor, diagnosticsToForward } from '../core/diagnostics';
import { TetherApi } from '../core/rpc';
import { ChangeTracker } from '../core/turns';

export function forwardDiagnostics(tracker: ChangeTracker, api: () => TetherApi | null): vscode.Disposable {
  const get = (uri: string): EditorDiagnostic[] => vscode.languages.getDiagnostics(vscode.Uri.parse(uri));
  const send = (params: ReturnType<typeof baselineFor>) => void api()?.sendDiagnostics(params).catch(() => undefined);
  const touched = tracker.onDidTouch((uri) => {
    if (uri.startsWith('file:')) send(baselineFor(uri, get));
  });
  const changes = vscode.languages.onDidChangeDiagnostics((event) => {
    if (!api() || tracker.touched.size === 0) return;
    const changed = event.uris.filter((u) => u.scheme === 'file').map((u) => u.toString());
    for (const params of diagnosticsToForward(changed, tracker.touched, get)) send(params);
  });
  return vscode.Disposable.from(touched, changes);
}
