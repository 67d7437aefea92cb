/** `tether/saveDocuments`: save what the agent just edited, so disk and buffer agree. */
import * as vscode from 'vscode';
import { uriKey } from '../core/uri';

export async function saveDocuments(uris: string[]): Promise<void> {
  for (const uri of uris) {
    const key = uriKey(uri);
    const doc =
      vscode.workspace.textDocuments.find((d) => uriKey(d.uri.toString()) === key) ??
      (await vscode.workspace.openTextDocument(vscode.Uri.parse(uri)));
    // Saving runs the user's save participants (format on save, etc.), as a save by hand would.
    if (doc.isDirty && !doc.isUntitled) await doc.save();
  }
}
