/**
 * Where the `tether` daemon comes from: the `tether.path` setting, else a virtualenv in a
 * workspace folder, else the environment the extension installed it into, else PATH, else
 * where pipx and uv install tools (~/.local/bin, which a fresh install has not put on the
 * editor's PATH yet). Pure (the file system is injected)
 * so every branch is tested.
 */
import * as path from 'path';

export interface ResolveInput {
  /** `tether.path`: a `tether` executable or a Python interpreter with tether installed. */
  setting?: string;
  workspaceFolders: string[];
  pathEnv?: string;
  platform: NodeJS.Platform;
  home?: string;
  /** Where pipx/uv put the tools they install (`toolBinDirs`), searched after PATH. */
  toolDirs?: string[];
  /** The `tether` of the environment "Install the Daemon" made, searched before PATH (it is
   * the one that matches this extension; an older one on PATH would shadow an update). */
  managed?: string;
  isExecutable(file: string): boolean;
}

export type Source = 'setting' | 'venv' | 'managed' | 'path' | 'tools';

export type Resolution =
  | { found: true; command: string; args: string[]; source: Source }
  | { found: false; reason: 'setting_missing' | 'not_found'; message: string; searched: string[] };

const VENV_DIRS = ['.venv', 'venv'];

export function resolveDaemon(input: ResolveInput): Resolution {
  const win = input.platform === 'win32';
  const p = win ? path.win32 : path.posix;
  if (input.setting && input.setting.trim()) {
    const file = expand(input.setting.trim(), input, p);
    if (input.isExecutable(file)) return { found: true, command: file, args: argsFor(file, p), source: 'setting' };
    return {
      found: false,
      reason: 'setting_missing',
      message: `tether.path is set to "${input.setting}", but ${file} is not an executable file.`,
      searched: [file],
    };
  }
  const searched: string[] = [];
  const exe = win ? ['tether.exe', 'tether.cmd'] : ['tether'];
  for (const folder of input.workspaceFolders) {
    for (const venv of VENV_DIRS) {
      for (const name of exe) {
        const file = p.join(folder, venv, win ? 'Scripts' : 'bin', name);
        searched.push(file);
        if (input.isExecutable(file)) return { found: true, command: file, args: ['serve'], source: 'venv' };
      }
    }
  }
  if (input.managed) {
    searched.push(input.managed);
    if (input.isExecutable(input.managed)) return { found: true, command: input.managed, args: ['serve'], source: 'managed' };
  }
  const dirs: [string, Source][] = [
    ...(input.pathEnv ?? '').split(win ? ';' : ':').map((d): [string, Source] => [d, 'path']),
    ...(input.toolDirs ?? []).map((d): [string, Source] => [d, 'tools']),
  ];
  for (const [dir, source] of dirs) {
    if (!dir) continue;
    for (const name of exe) {
      const file = p.join(dir, name);
      if (searched.includes(file)) continue;
      searched.push(file);
      if (input.isExecutable(file)) return { found: true, command: file, args: ['serve'], source };
    }
  }
  return {
    found: false,
    reason: 'not_found',
    message:
      'The Tether daemon (`tether`) was not found in tether.path, a .venv or venv of the workspace, the extension\'s own environment, PATH or ~/.local/bin. ' +
      'Install it with "Tether: Install the Daemon", or set tether.path.',
    searched,
  };
}

/** A Python interpreter runs the package as a module; anything else is the `tether` script. */
function argsFor(file: string, p: typeof path.posix): string[] {
  return /^python(\d+(\.\d+)*)?(\.exe)?$/i.test(p.basename(file)) ? ['-m', 'tether', 'serve'] : ['serve'];
}

function expand(setting: string, input: ResolveInput, p: typeof path.posix): string {
  let file = setting;
  const folder = input.workspaceFolders[0];
  if (folder) file = file.replace(/\$\{workspaceFolder\}/g, folder);
  if (input.home && (file === '~' || file.startsWith('~/'))) file = p.join(input.home, file.slice(1));
  if (!p.isAbsolute(file) && folder) file = p.join(folder, file);
  return file;
}

/** Where pipx and uv put the `tether` they install (before PATH knows about it): their
 * own settings, else uv's XDG rule ($XDG_BIN_HOME, $XDG_DATA_HOME/../bin), else ~/.local/bin. */
export function toolBinDirs(env: Record<string, string | undefined>, platform: NodeJS.Platform, home?: string): string[] {
  const p = platform === 'win32' ? path.win32 : path.posix;
  const dataBin = env.XDG_DATA_HOME ? p.join(env.XDG_DATA_HOME, '..', 'bin') : undefined;
  const dirs = [env.PIPX_BIN_DIR, env.UV_TOOL_BIN_DIR, env.XDG_BIN_HOME, dataBin, home ? p.join(home, '.local', 'bin') : undefined];
  return [...new Set(dirs.filter((d): d is string => Boolean(d)))];
}
