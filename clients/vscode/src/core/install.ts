/**
 * Installing the daemon from the wheel the extension ships (`dist/daemon/*.whl`) with the
 * installers users have: pipx or uv, each of which puts `tether` in ~/.local/bin.
 */
import * as path from 'path';
import { Installer } from './setup';

export interface InstallerInput {
  pathEnv?: string;
  platform: NodeJS.Platform;
  home?: string;
  isExecutable(file: string): boolean;
}

/** Installers found on PATH (or where their own installers put them). */
export function findInstallers(input: InstallerInput): { installer: Installer; command: string }[] {
  const found: { installer: Installer; command: string }[] = [];
  for (const installer of ['pipx', 'uv'] as const) {
    const command = findExecutable(installer, input, installer === 'uv' ? ['.local/bin', '.cargo/bin'] : ['.local/bin']);
    if (command) found.push({ installer, command });
  }
  return found;
}

function findExecutable(name: string, input: InstallerInput, homeDirs: string[]): string | undefined {
  const win = input.platform === 'win32';
  const p = win ? path.win32 : path.posix;
  const names = win ? [`${name}.exe`, `${name}.cmd`] : [name];
  const dirs = (input.pathEnv ?? '').split(win ? ';' : ':').filter(Boolean);
  if (input.home) dirs.push(...homeDirs.map((d) => p.join(input.home!, d)));
  for (const dir of dirs) for (const n of names) if (input.isExecutable(p.join(dir, n))) return p.join(dir, n);
  return undefined;
}

/** The command line that installs (or replaces) the daemon from `wheel`. */
export function installArgs(installer: Installer, wheel: string): string[] {
  // --force: the same command updates a daemon that is too old.
  return installer === 'pipx' ? ['install', '--force', wheel] : ['tool', 'install', '--force', wheel];
}

/** Where pipx and uv put the `tether` they install (before PATH knows about it): their
 * own settings, else uv's XDG rule ($XDG_BIN_HOME, $XDG_DATA_HOME/../bin), else ~/.local/bin. */
export function toolBinDirs(env: Record<string, string | undefined>, platform: NodeJS.Platform, home?: string): string[] {
  const p = platform === 'win32' ? path.win32 : path.posix;
  const dataBin = env.XDG_DATA_HOME ? p.join(env.XDG_DATA_HOME, '..', 'bin') : undefined;
  const dirs = [env.PIPX_BIN_DIR, env.UV_TOOL_BIN_DIR, env.XDG_BIN_HOME, dataBin, home ? p.join(home, '.local', 'bin') : undefined];
  return [...new Set(dirs.filter((d): d is string => Boolean(d)))];
}
