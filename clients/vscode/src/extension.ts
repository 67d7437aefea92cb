/**
 * The entry point, kept cheap: VS Code activates the extension as soon as a file is opened
 * (`onLanguage`), so that "Fix with Tether" is in the light bulb from the start. Activation
 * registers only what must exist before any use: the quick fix provider, the two views and
 * the contributed commands. Nothing starts: no daemon, no output channel, no status item.
 *
 * The first real use (a command, the chat view opened, the Changes view shown, a quick fix
 * chosen, a workspace with a `.tether/` folder) loads the rest (`tether.ts`, bundled apart
 * as `dist/tether.js`, with the language client) and starts the daemon.
 */
import * as fs from 'fs';
import * as path from 'path';
import * as vscode from 'vscode';
import type { Tether } from './tether';
import { registerFixProvider } from './vscode/fixes';

/** Tether once in use; undefined until then. */
let tether: Tether | undefined;

export function activate(context: vscode.ExtensionContext): void {
  const began = performance.now();
  let activationMs: number | undefined;
  // The Changes view exists from the start; its content comes with Tether.
  const changesChanged = new vscode.EventEmitter<unknown>();
  const use = (): Tether => {
    if (!tether) {
      // Bundled apart (esbuild.mjs): loading it is the cost activation does not pay.
      // eslint-disable-next-line @typescript-eslint/no-require-imports
      const main = require('./tether.js') as typeof import('./tether');
      tether = main.start(context, { activationMs });
      const relay = tether.changes.onDidChangeTreeData?.((e) => changesChanged.fire(e));
      if (relay) context.subscriptions.push(relay);
    }
    return tether;
  };

  const commands = (context.extension.packageJSON as { contributes?: { commands?: { command: string }[] } }).contributes?.commands ?? [];
  context.subscriptions.push(
    changesChanged,
    registerFixProvider(),
    // Every contributed command: the first run of any loads Tether.
    ...commands.map(({ command }) => vscode.commands.registerCommand(command, (...args: unknown[]) => use().commands[command]?.(...args))),
    vscode.window.registerWebviewViewProvider(
      'tether.chat',
      { resolveWebviewView: (view, state, token) => use().chat.resolveWebviewView(view, state, token) },
      // Keeps the DOM (scroll position, half-typed prompt) while the view is hidden.
      { webviewOptions: { retainContextWhenHidden: true } },
    ),
    vscode.window.createTreeView('tether.changes', {
      treeDataProvider: {
        onDidChangeTreeData: changesChanged.event,
        getChildren: (node) => use().changes.getChildren(node),
        getTreeItem: (node) => use().changes.getTreeItem(node),
      },
      showCollapseAll: true,
    }),
  );
  // A workspace set up for Tether uses it from the start.
  const folders = (vscode.workspace.workspaceFolders ?? []).filter((f) => f.uri.scheme === 'file');
  activationMs = performance.now() - began;
  if (folders.some((f) => fs.existsSync(path.join(f.uri.fsPath, '.tether')))) use();
}

export async function deactivate(): Promise<void> {
  await tether?.dispose();
  tether = undefined;
}
