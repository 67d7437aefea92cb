/** Keyboard-first pickers: sessions (list, resume, new) and the permission mode. */
import * as vscode from 'vscode';
import { ChatController } from '../core/session';
import { SessionEntry, sessionEntries } from '../core/sessionList';
import { MODES, Mode } from '../core/wire';

const MODE_LABELS: Record<Mode, string> = {
  default: 'Ask before edits and commands',
  acceptEdits: 'Accept edits, ask before commands',
  plan: 'Plan only: read and propose, change nothing',
  bypassPermissions: 'Never ask (bypass permissions)',
  dontAsk: 'Never ask; deny what rules do not allow',
};

export function modeLabel(mode: Mode): string {
  return MODE_LABELS[mode];
}

export async function pickSession(controller: ChatController): Promise<void> {
  const groups = await controller.listSessions();
  type Item = vscode.QuickPickItem & { entry?: SessionEntry };
  const items: Item[] = sessionEntries(groups, controller.sessionId).map((entry): Item => {
    switch (entry.type) {
      case 'folder':
        return { label: entry.label, kind: vscode.QuickPickItemKind.Separator };
      case 'new':
        return { label: `$(add) ${entry.label}`, alwaysShow: true, entry };
      case 'session':
        return { label: entry.label, description: entry.description, detail: entry.current ? 'current session' : undefined, entry };
    }
  });
  const picked = await vscode.window.showQuickPick(items, {
    title: 'Tether sessions',
    placeHolder: groups.length > 1 ? 'Resume a session of a workspace folder, or start a new one' : 'Resume a session or start a new one',
    matchOnDescription: true,
  });
  const entry = picked?.entry;
  if (entry?.type === 'session') await controller.loadSession(entry.sessionId, entry.folderUri);
  else if (entry?.type === 'new') await controller.newSession(entry.folderUri);
}

export async function pickMode(controller: ChatController): Promise<void> {
  const items = MODES.map((mode) => ({ label: mode, description: MODE_LABELS[mode], picked: mode === controller.state.mode, mode }));
  const picked = await vscode.window.showQuickPick(items, { title: 'Tether permission mode', placeHolder: `Current: ${controller.state.mode}` });
  if (picked) await controller.setMode(picked.mode);
}
