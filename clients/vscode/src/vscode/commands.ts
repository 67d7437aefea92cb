/** The extension's commands (package.json `contributes.commands`). */
import * as path from 'path';
import * as vscode from 'vscode';
import { selectionLabel } from '../core/mentions';
import { ChatController } from '../core/session';
import { ChatView } from './chatView';
import { Daemon } from './daemon';
import { pickMode, pickSession } from './pickers';
import { openSettings } from './settings';

export function registerCommands(deps: {
  controller: ChatController;
  view: ChatView;
  daemon: Daemon;
  output: vscode.LogOutputChannel;
}): vscode.Disposable[] {
  const { controller, view, daemon, output } = deps;
  const reg = (id: string, fn: (...args: unknown[]) => unknown) => vscode.commands.registerCommand(id, fn);
  return [
    reg('tether.openChat', () => view.focus()),
    reg('tether.newSession', async () => {
      await controller.newSession();
      await view.focus();
    }),
    reg('tether.pickSession', () => pickSession(controller)),
    reg('tether.setMode', () => pickMode(controller)),
    reg('tether.stop', () => controller.stop()),
    reg('tether.addSelection', () => addSelection(view)),
    reg('tether.showLog', () => output.show()),
    reg('tether.restart', () => daemon.restart()),
    reg('tether.configure', () => openSettings()),
  ];
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
