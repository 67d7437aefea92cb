/** Keyboard-first pickers: sessions (list, resume, new) and the permission mode. */
import * as vscode from 'vscode';
import { ChatController } from '../core/session';
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
  const sessions = await controller.listSessions();
  type Item = vscode.QuickPickItem & { sessionId?: string };
  const items: Item[] = [
    { label: '$(add) New session', alwaysShow: true },
    { label: '', kind: vscode.QuickPickItemKind.Separator },
    ...sessions.map((s) => ({
      label: s.title || '(untitled)',
      description: `${s.turns} turn${s.turns === 1 ? '' : 's'} · ${when(s.updatedAt)}`,
      detail: s.sessionId === controller.sessionId ? 'current session' : undefined,
      sessionId: s.sessionId,
    })),
  ];
  const picked = await vscode.window.showQuickPick(items, { title: 'Tether sessions', placeHolder: 'Resume a session or start a new one', matchOnDescription: true });
  if (!picked) return;
  if (picked.sessionId) await controller.loadSession(picked.sessionId);
  else await controller.newSession();
}

export async function pickMode(controller: ChatController): Promise<void> {
  const items = MODES.map((mode) => ({ label: mode, description: MODE_LABELS[mode], picked: mode === controller.state.mode, mode }));
  const picked = await vscode.window.showQuickPick(items, { title: 'Tether permission mode', placeHolder: `Current: ${controller.state.mode}` });
  if (picked) await controller.setMode(picked.mode);
}

function when(iso: string): string {
  const t = Date.parse(iso);
  if (Number.isNaN(t)) return iso;
  const minutes = Math.round((Date.now() - t) / 60_000);
  if (minutes < 1) return 'just now';
  if (minutes < 60) return `${minutes} min ago`;
  if (minutes < 60 * 24) return `${Math.round(minutes / 60)} h ago`;
  return new Date(t).toLocaleDateString();
}
