/** The extension's settings (package.json `contributes.configuration`), read in one place. */
import * as fs from 'fs';
import * as os from 'os';
import * as vscode from 'vscode';
import { LaunchSettings } from '../core/capabilities';
import { envPaths } from '../core/install';
import { toolBinDirs } from '../core/resolve';
import { Resolution, resolveDaemon } from '../core/resolve';
import { MODES, Mode } from '../core/wire';

export const SECTION = 'tether';

export function launchSettings(): LaunchSettings & { env: Record<string, string> } {
  const config = vscode.workspace.getConfiguration(SECTION);
  const mode = config.get<string>('permissionMode', 'default');
  const env = config.get<Record<string, unknown>>('env', {});
  return {
    model: config.get<string>('model') || undefined,
    permissionMode: (MODES as readonly string[]).includes(mode) ? (mode as Mode) : 'default',
    // Settings are user JSON: keep only string values.
    env: Object.fromEntries(Object.entries(env).filter((e): e is [string, string] => typeof e[1] === 'string')),
  };
}

/** Where the daemon is; `managedEnv`: the environment "Install the Daemon" makes. */
export function findDaemon(managedEnv?: string): Resolution {
  const config = vscode.workspace.getConfiguration(SECTION);
  return resolveDaemon({
    setting: config.get<string>('path'),
    workspaceFolders: (vscode.workspace.workspaceFolders ?? []).filter((f) => f.uri.scheme === 'file').map((f) => f.uri.fsPath),
    pathEnv: process.env.PATH,
    platform: process.platform,
    home: os.homedir(),
    toolDirs: toolBinDirs(process.env, process.platform, os.homedir()),
    managed: managedEnv ? envPaths(managedEnv, process.platform).tether : undefined,
    isExecutable,
  });
}

export function isExecutable(file: string): boolean {
  try {
    if (!fs.statSync(file).isFile()) return false;
    fs.accessSync(file, process.platform === 'win32' ? fs.constants.F_OK : fs.constants.X_OK);
    return true;
  } catch {
    return false;
  }
}

export function openSettings(setting: 'path' | 'model' = 'path'): Thenable<unknown> {
  return vscode.commands.executeCommand('workbench.action.openSettings', `${SECTION}.${setting}`);
}
