/**
 * Where the `tether` daemon comes from: the `tether.path` setting, else a virtualenv in a
 * workspace folder, else PATH, else where pipx and uv install tools (~/.local/bin, which a
 * fresh install has not put on the editor's PATH yet). Pure (the file system is injected)
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
  isExecutable(file: string): boolean;
}

export type Source = 'setting' | 'venv' | 'path' | 'tools';

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
      'The Tether daemon (`tether`) was not found in tether.path, a .venv or venv of the workspace, PATH or ~/.local/bin. ' +
      'Install it with "Tether: Install the Daemon" (pipx or uv), or set tether.path.',
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
