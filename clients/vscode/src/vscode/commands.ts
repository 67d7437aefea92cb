/** The extension's commands (package.json `contributes.commands`), as handlers by id: the
 * light entry point (`extension.ts`) registers every contributed id and forwards here. */
import * as path from 'path';
import * as vscode from 'vscode';
import { selectionLabel } from '../core/mentions';
import { ChatController } from '../core/session';
import { ApiKey } from './apiKey';
import { ChatView } from './chatView';
import { Daemon } from './daemon';
import { pickMode, pickSession } from './pickers';
import { SECTION, openSettings } from './settings';

export type CommandHandler = (...args: unknown[]) => unknown;

export function commandHandlers(deps: {
  controller: ChatController;
  view: ChatView;
  daemon: Daemon;
  output: vscode.LogOutputChannel;
  apiKey: ApiKey;
  install(): Promise<void>;
}): Record<string, CommandHandler> {
  const { controller, view, daemon, output, apiKey } = deps;
  return {
    'tether.openChat': () => view.focus(),
    'tether.newSession': async () => {
      await controller.newSession();
      await view.focus();
    },
    'tether.pickSession': () => pickSession(controller),
    'tether.setMode': () => pickMode(controller),
    'tether.stop': () => controller.stop(),
    'tether.addSelection': () => addSelection(view),
    'tether.showLog': () => output.show(),
    'tether.restart': () => daemon.restart(),
    'tether.configure': () => openSettings(),
    // A stored key reaches the daemon through a restart (ApiKey.onDidChange).
    'tether.setApiKey': () => apiKey.prompt(),
    'tether.useLocalModel': () => openSettings('model'),
    'tether.setPath': () => setPath(),
    'tether.installDaemon': () => deps.install(),
  };
}

/** Pick the `tether` executable (or a Python with Tether installed) for `tether.path`. */
async function setPath(): Promise<void> {
  const picked = await vscode.window.showOpenDialog({
    title: 'Tether: the tether executable (or a Python interpreter that has Tether installed)',
    openLabel: 'Use for Tether',
    canSelectFiles: true,
    canSelectFolders: false,
    canSelectMany: false,
  });
  if (!picked?.[0]) return;
  // The daemon restarts on the configuration change.
  await vscode.workspace.getConfiguration(SECTION).update('path', picked[0].fsPath, vscode.ConfigurationTarget.Global);
}

/** Add a whole file to the prompt box (the editor title button on a file without problems). */
export async function attachFile(view: ChatView, uri: vscode.Uri): Promise<void> {
  await view.focus();
  view.post({ type: 'attach', attachment: { uri: uri.toString(), label: path.basename(uri.fsPath) } });
}

/** Attach the editor's selection (or the whole file when nothing is selected) to the prompt. */
async function addSelection(view: ChatView): Promise<void> {
  const editor = vscode.window.activeTextEditor;
  if (!editor || editor.document.uri.scheme !== 'file') {
    void vscode.window.showInformationMessage('Tether: open a file and select some text to add it to the prompt.');
    return;
  }
  const uri = editor.document.uri.toString();
  const name = path.basename(editor.document.uri.fsPath);
  const s = editor.selection;
  const attachment = s.isEmpty
    ? { uri, label: name }
    : {
        uri,
        range: { start: { line: s.start.line, character: s.start.character }, end: { line: s.end.line, character: s.end.character } },
        label: selectionLabel(name, s),
      };
  await view.focus();
  view.post({ type: 'attach', attachment });
}
