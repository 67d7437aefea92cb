/**
 * "Tether: Install the Daemon": installs the wheel this extension ships (`daemon/`)
 * with pipx or uv, in the background with a progress notification and the installer's
 * output in the Tether log, then starts the daemon it installed.
 */
import { spawn } from 'child_process';
import * as fs from 'fs';
import * as vscode from 'vscode';
import { installArgs } from '../core/install';
import { Installer } from '../core/setup';
import { installers } from './settings';

export interface InstallDeps {
  extensionUri: vscode.Uri;
  output: vscode.LogOutputChannel;
  /** Start (again) with what is installed now. */
  restart(): Promise<void>;
}

export async function installDaemon(deps: InstallDeps, wanted?: Installer): Promise<void> {
  const wheel = bundledWheel(deps.extensionUri);
  if (!wheel) {
    await failed(deps, 'This build of the extension carries no daemon wheel. Build one from the repository (`python -m build`) and install it with pipx or uv, or set tether.path.');
    return;
  }
  const available = installers();
  const choice = wanted ? available.find((i) => i.installer === wanted) : await pickInstaller(available);
  if (!choice) {
    if (available.length === 0 || wanted) {
      await failed(deps, `${wanted ?? 'pipx or uv'} was not found. Install it first (or run \`pip install ${wheel}\` in a virtualenv and set tether.path to its tether).`);
    }
    return;
  }
  const args = installArgs(choice.installer, wheel);
  deps.output.info(`Installing the daemon: ${choice.command} ${args.join(' ')}`);
  const code = await vscode.window.withProgress(
    { location: vscode.ProgressLocation.Notification, title: `Installing the Tether daemon with ${choice.installer}…`, cancellable: true },
    (_progress, token) => run(choice.command, args, deps.output, token),
  );
  if (code !== 0) {
    await failed(deps, `Installing the Tether daemon with ${choice.installer} failed (${code === null ? 'stopped' : `exit code ${code}`}). Its output is in the Tether log; the command was: ${choice.command} ${args.join(' ')}`);
    return;
  }
  void vscode.window.showInformationMessage(`Tether: the daemon is installed (${choice.installer}).`);
  await deps.restart();
}

/** The wheel packaged into `daemon/` at build time (wheel.mjs), if any. */
export function bundledWheel(extensionUri: vscode.Uri): string | undefined {
  const dir = vscode.Uri.joinPath(extensionUri, 'daemon').fsPath;
  const name = fs.existsSync(dir) ? fs.readdirSync(dir).find((f) => f.endsWith('.whl')) : undefined;
  return name ? vscode.Uri.joinPath(extensionUri, 'daemon', name).fsPath : undefined;
}

async function pickInstaller(available: ReturnType<typeof installers>): Promise<ReturnType<typeof installers>[number] | undefined> {
  if (available.length <= 1) return available[0];
  const picked = await vscode.window.showQuickPick(
    available.map((i) => ({ label: i.installer, description: i.command, item: i })),
    { title: 'Install the Tether daemon with', placeHolder: 'pipx or uv: both put `tether` in ~/.local/bin' },
  );
  return picked?.item;
}

function run(command: string, args: string[], output: vscode.LogOutputChannel, token: vscode.CancellationToken): Promise<number | null> {
  return new Promise((resolve) => {
    const child = spawn(command, args, { stdio: ['ignore', 'pipe', 'pipe'] });
    const log = (data: Buffer) => output.info(data.toString().trimEnd());
    child.stdout.on('data', log);
    child.stderr.on('data', log);
    const cancel = token.onCancellationRequested(() => child.kill());
    child.on('error', (error) => {
      output.error(`${command}: ${error.message}`);
      cancel.dispose();
      resolve(-1);
    });
    child.on('close', (code) => {
      cancel.dispose();
      resolve(code);
    });
  });
}

async function failed(deps: InstallDeps, message: string): Promise<void> {
  deps.output.error(message);
  const pick = await vscode.window.showErrorMessage(message, 'Show Log', 'Set Path…');
  if (pick === 'Show Log') deps.output.show();
  else if (pick === 'Set Path…') await vscode.commands.executeCommand('tether.setPath');
}
