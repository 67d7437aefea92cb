/**
 * "Tether: Install the Daemon": puts the wheel this extension ships (`daemon/`) into an
 * environment of the extension's own (`core/install.ts` decides how: uv, else a Python ≥
 * 3.11 from PATH), in the background with a progress notification and every command's
 * output in the Tether log, then starts the daemon it installed. Run again, it updates.
 */
import { spawn } from 'child_process';
import * as fs from 'fs';
import * as os from 'os';
import * as path from 'path';
import * as vscode from 'vscode';
import { PROBE_ARGS, PythonProbe, envPaths, findUv, installPlan, onPath, pythonNames } from '../core/install';
import { isExecutable } from './settings';

export interface InstallDeps {
  extensionUri: vscode.Uri;
  /** The environment's folder, in the extension's global storage. */
  envDir: string;
  output: vscode.LogOutputChannel;
  /** Start (again) with what is installed now. */
  restart(): Promise<void>;
}

type Outcome = { ok: true; using: string } | { ok: false; message: string; cancelled?: boolean };

export async function installDaemon(deps: InstallDeps): Promise<void> {
  const wheel = bundledWheel(deps.extensionUri);
  if (!wheel) {
    await failed(deps, 'This build of the extension carries no daemon wheel. Install Tether with `uv tool install` or `pipx install` from the repository, or into a virtualenv, and set tether.path to its tether.');
    return;
  }
  const outcome = await vscode.window.withProgress(
    { location: vscode.ProgressLocation.Notification, title: 'Installing the Tether daemon', cancellable: true },
    (progress, token) => install(deps, wheel, (message) => progress.report({ message }), token),
  );
  if (!outcome.ok) {
    if (!outcome.cancelled) await failed(deps, outcome.message);
    else deps.output.warn(outcome.message);
    return;
  }
  deps.output.info(`The daemon is installed in ${deps.envDir} (with ${outcome.using}).`);
  void vscode.window.showInformationMessage(`Tether: the daemon is installed (with ${outcome.using}).`);
  await deps.restart();
}

async function install(deps: InstallDeps, wheel: string, report: (message: string) => void, token: vscode.CancellationToken): Promise<Outcome> {
  const { output, envDir } = deps;
  report('Looking for uv or Python 3.11+…');
  const uv = findUv(process.env.PATH, process.platform, os.homedir(), isExecutable);
  const pythons = uv ? [] : await Promise.all(onPath(pythonNames(process.platform), process.env.PATH, process.platform, isExecutable).map(probe));
  for (const p of pythons) output.info(`Found ${p.command}: ${p.version ? `Python ${p.version}${p.venv ? '' : ' (no venv/ensurepip)'}` : 'does not run'}`);
  let envExists = false;
  if (fs.existsSync(envDir)) {
    // An environment from an earlier install is updated in place, unless it is broken (its
    // Python gone, or, for pip, no pip in it: an install stopped half-way): then it is made
    // again.
    const python = envPaths(envDir, process.platform).python;
    envExists = uv ? (await probe(python)).version !== undefined : await succeeds(python, ['-m', 'pip', '--version']);
    if (!envExists) {
      output.info(`The environment in ${envDir} is broken; making it again.`);
      fs.rmSync(envDir, { recursive: true, force: true });
    }
  }
  const plan = installPlan({ platform: process.platform, envDir, wheel, uv, pythons, envExists });
  if (!plan.ok) return plan;
  fs.mkdirSync(path.dirname(envDir), { recursive: true });
  output.info(`Installing the daemon into ${envDir} with ${plan.using}`);
  for (const step of plan.steps) {
    report(step.title);
    output.info(`$ ${step.command} ${step.args.join(' ')}`);
    const code = await run(step.command, step.args, output, token, (line) => report(`${step.title} ${line}`));
    if (token.isCancellationRequested) return { ok: false, message: 'Installing the daemon was cancelled.', cancelled: true };
    if (code !== 0) {
      return { ok: false, message: `Installing the Tether daemon failed: \`${step.command} ${step.args.join(' ')}\` ${code === null ? 'was stopped' : `exited with ${code}`}. Its output is in the Tether log.` };
    }
  }
  if (!isExecutable(plan.tether)) return { ok: false, message: `The install finished, but ${plan.tether} is not there. The Tether log has the installer's output.` };
  return { ok: true, using: plan.using };
}

/** Run a candidate interpreter: its version, and whether it can make a venv. */
function probe(command: string): Promise<PythonProbe> {
  return new Promise((resolve) => {
    let out = '';
    const child = spawn(command, PROBE_ARGS, { stdio: ['ignore', 'pipe', 'ignore'], timeout: 15_000 });
    child.stdout.on('data', (d: Buffer) => (out += d.toString()));
    child.on('error', () => resolve({ command, venv: false }));
    child.on('close', (code) => {
      const version = /^(\d+\.\d+\.\d+)/.exec(out.trim())?.[1];
      resolve({ command, ...(version ? { version } : {}), venv: code === 0 && version !== undefined });
    });
  });
}

function succeeds(command: string, args: string[]): Promise<boolean> {
  return new Promise((resolve) => {
    const child = spawn(command, args, { stdio: 'ignore', timeout: 30_000 });
    child.on('error', () => resolve(false));
    child.on('close', (code) => resolve(code === 0));
  });
}

/** The wheel packaged into `daemon/` at build time (wheel.mjs), if any. */
export function bundledWheel(extensionUri: vscode.Uri): string | undefined {
  const dir = vscode.Uri.joinPath(extensionUri, 'daemon').fsPath;
  const name = fs.existsSync(dir) ? fs.readdirSync(dir).find((f) => f.endsWith('.whl')) : undefined;
  return name ? vscode.Uri.joinPath(extensionUri, 'daemon', name).fsPath : undefined;
}

/** Run `command`; its output goes to the log, and its progress lines (pip's "Collecting…",
 * uv's "Prepared…") to `progress`. Resolves with the exit code (null: killed). */
function run(command: string, args: string[], output: vscode.LogOutputChannel, token: vscode.CancellationToken, progress: (line: string) => void): Promise<number | null> {
  return new Promise((resolve) => {
    const child = spawn(command, args, { stdio: ['ignore', 'pipe', 'pipe'], env: { ...process.env, PIP_DISABLE_PIP_VERSION_CHECK: '1' } });
    const log = (data: Buffer) => {
      for (const line of data.toString().split(/\r?\n/)) {
        if (!line.trim()) continue;
        output.info(line.trimEnd());
        const step = /^\s*(Collecting|Downloading|Installing collected|Successfully installed|Prepared|Installed|Resolved)\b.*/.exec(line);
        if (step) progress(step[0].trim().slice(0, 80));
      }
    };
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
  const pick = await vscode.window.showErrorMessage(message.replace(/`/g, ''), 'Show Log', 'Set Path…');
  if (pick === 'Show Log') deps.output.show();
  else if (pick === 'Set Path…') await vscode.commands.executeCommand('tether.setPath');
}
