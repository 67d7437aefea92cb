/**
 * Installing the daemon for the user, with nothing but a Python: the extension ships the
 * daemon's wheel (`daemon/*.whl`) and puts it into an environment of its own (in its global
 * storage), made with `uv` when the machine has it (uv also finds, or fetches, a Python ≥
 * 3.11), else with the first Python ≥ 3.11 found on PATH (`python -m venv`, then pip).
 * When there is neither, it says exactly what is missing and how to get it.
 *
 * Pure: which Pythons exist and what they are is probed by the caller (`probePython` says
 * how), the plan and the messages are decided here.
 */
import * as path from 'path';

export const MIN_PYTHON: readonly [number, number] = [3, 11];

/** What running a candidate interpreter told us. */
export interface PythonProbe {
  /** The command as found on PATH (absolute). */
  command: string;
  /** `major.minor.micro`; undefined when it did not run at all (a broken shim, a stub). */
  version?: string;
  /** It can make a virtual environment (`venv` and `ensurepip` import). */
  venv: boolean;
}

/** The script a candidate runs: prints its version, then fails if it cannot make a venv. */
export const PROBE_ARGS = ['-c', "import sys; sys.stdout.write('%d.%d.%d\\n' % tuple(sys.version_info[:3])); sys.stdout.flush(); import venv, ensurepip"];

/** Interpreter names to try, newest first; `python3` and `python` last (they may be old). */
export function pythonNames(platform: NodeJS.Platform): string[] {
  const names = ['python3.14', 'python3.13', 'python3.12', 'python3.11', 'python3', 'python'];
  return platform === 'win32' ? ['python.exe', 'python3.exe'] : names;
}

/** Executables named `names` on PATH, in PATH order per name (`isExecutable` is injected). */
export function onPath(names: string[], pathEnv: string | undefined, platform: NodeJS.Platform, isExecutable: (file: string) => boolean): string[] {
  const p = platform === 'win32' ? path.win32 : path.posix;
  const dirs = (pathEnv ?? '').split(platform === 'win32' ? ';' : ':').filter(Boolean);
  const found: string[] = [];
  for (const name of names) {
    for (const dir of dirs) {
      const file = p.join(dir, name);
      if (!found.includes(file) && isExecutable(file)) found.push(file);
    }
  }
  return found;
}

/** uv where users have it: PATH, else where its installer puts it. */
export function findUv(pathEnv: string | undefined, platform: NodeJS.Platform, home: string | undefined, isExecutable: (file: string) => boolean): string | undefined {
  const p = platform === 'win32' ? path.win32 : path.posix;
  const name = platform === 'win32' ? 'uv.exe' : 'uv';
  const extra = home ? [p.join(home, '.local', 'bin'), p.join(home, '.cargo', 'bin')].join(platform === 'win32' ? ';' : ':') : '';
  return onPath([name], [pathEnv, extra].filter(Boolean).join(platform === 'win32' ? ';' : ':'), platform, isExecutable)[0];
}

function atLeast(version: string, min: readonly [number, number]): boolean {
  const [major, minor] = version.split('.').map(Number);
  return major > min[0] || (major === min[0] && minor >= min[1]);
}

/** One command of an install, and what the progress says meanwhile. */
export interface InstallStep {
  title: string;
  command: string;
  args: string[];
}

export type InstallPlan =
  | { ok: true; using: string; steps: InstallStep[]; tether: string }
  | { ok: false; message: string };

export interface PlanInput {
  platform: NodeJS.Platform;
  /** The environment's folder (the extension's global storage). */
  envDir: string;
  wheel: string;
  uv?: string;
  /** The candidates on PATH, probed (empty when uv is there: it finds its own Python). */
  pythons: PythonProbe[];
  /** The environment already exists and its Python runs: only the install step is needed. */
  envExists: boolean;
}

/** Where the environment keeps its programs. */
export function envPaths(envDir: string, platform: NodeJS.Platform): { python: string; tether: string } {
  const p = platform === 'win32' ? path.win32 : path.posix;
  const bin = p.join(envDir, platform === 'win32' ? 'Scripts' : 'bin');
  return { python: p.join(bin, platform === 'win32' ? 'python.exe' : 'python'), tether: p.join(bin, platform === 'win32' ? 'tether.exe' : 'tether') };
}

export function installPlan(input: PlanInput): InstallPlan {
  const { python, tether } = envPaths(input.envDir, input.platform);
  const version = `${MIN_PYTHON[0]}.${MIN_PYTHON[1]}`;
  if (input.uv) {
    const steps: InstallStep[] = [];
    if (!input.envExists) {
      steps.push({ title: `Creating an environment (uv, Python ≥ ${version})…`, command: input.uv, args: ['venv', '--python', `>=${version}`, input.envDir] });
    }
    steps.push({ title: 'Installing Tether and its dependencies…', command: input.uv, args: ['pip', 'install', '--python', python, '--reinstall', input.wheel] });
    return { ok: true, using: `uv (${input.uv})`, steps, tether };
  }
  const usable = input.pythons.find((c) => c.version && atLeast(c.version, MIN_PYTHON) && c.venv);
  if (!usable && !input.envExists) return { ok: false, message: missingPython(input.pythons, input.platform) };
  const steps: InstallStep[] = [];
  if (!input.envExists && usable) {
    steps.push({ title: `Creating an environment with Python ${usable.version}…`, command: usable.command, args: ['-m', 'venv', input.envDir] });
  }
  steps.push({
    title: 'Installing Tether and its dependencies (a minute or so)…',
    command: python,
    args: ['-m', 'pip', 'install', '--disable-pip-version-check', '--force-reinstall', input.wheel],
  });
  return { ok: true, using: usable ? `Python ${usable.version} (${usable.command})` : `the environment's Python (${python})`, steps, tether };
}

/** Exactly what is missing: each Python found and why it cannot be used, and how to fix it. */
export function missingPython(found: PythonProbe[], platform: NodeJS.Platform): string {
  const version = `${MIN_PYTHON[0]}.${MIN_PYTHON[1]}`;
  const why = found.map((c) => {
    if (!c.version) return `${c.command} does not run`;
    if (!atLeast(c.version, MIN_PYTHON)) return `${c.command} is Python ${c.version}, older than ${version}`;
    const [major, minor] = c.version.split('.');
    return `${c.command} (Python ${c.version}) cannot make a virtual environment: its venv module or ensurepip is missing (on Debian and Ubuntu: \`sudo apt install python${major}.${minor}-venv\`)`;
  });
  const how =
    platform === 'darwin'
      ? '`brew install python@3.12` or the installer from python.org'
      : platform === 'win32'
        ? 'the installer from python.org'
        : `your system's packages (e.g. \`sudo apt install python3 python3-venv\` where python3 is ${version} or later) or python.org`;
  const seen = why.length ? `Found: ${why.join('; ')}.` : 'No python3 or python is on PATH.';
  return (
    `Installing the Tether daemon needs Python ${version} or later that can make a virtual environment, or uv. ${seen} ` +
    `Install Python with ${how}, or uv (docs.astral.sh/uv, it fetches a Python by itself), then press Install again; or point \`tether.path\` at a \`tether\` you have.`
  );
}
