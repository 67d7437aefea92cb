/**
 * The set-up card's buttons as commands, and the same card as a notification for a user
 * who started Tether without its chat in view (a command, a quick fix, a `.tether/` folder).
 */
import * as vscode from 'vscode';
import { SetupActionId, SetupState } from '../core/setup';

/** The command each button runs. */
export const SETUP_COMMANDS: Record<SetupActionId, [string, ...unknown[]]> = {
  install: ['tether.installDaemon'],
  setPath: ['tether.setPath'],
  setApiKey: ['tether.setApiKey'],
  useLocalModel: ['tether.useLocalModel'],
  showLog: ['tether.showLog'],
  restart: ['tether.restart'],
};

export async function runSetupCommand(action: SetupActionId): Promise<void> {
  const entry = Object.prototype.hasOwnProperty.call(SETUP_COMMANDS, action) ? SETUP_COMMANDS[action] : undefined;
  if (entry) await vscode.commands.executeCommand(...entry);
}

/** Give the chat a moment to come up: a chat in view already shows the card. */
const SETTLE_MS = 1500;
let lastShown: string | undefined;

export async function noticeSetup(setup: SetupState, chatVisible: () => boolean): Promise<void> {
  await new Promise((r) => setTimeout(r, SETTLE_MS));
  const key = `${setup.problem}:${setup.detail}`;
  if (chatVisible() || lastShown === key) return;
  lastShown = key;
  const labels = setup.actions.map((a) => a.label);
  const picked = await vscode.window.showWarningMessage(`Tether: ${setup.title}. ${setup.detail.replace(/`/g, '')}`, ...labels);
  const action = setup.actions.find((a) => a.label === picked);
  if (action) await runSetupCommand(action.id);
}
