// Builds the daemon's wheel from the repository into daemon/, where the packaged extension
// finds it for "Tether: Install the Daemon" (pipx or uv install it from there). Python: the
// TETHER_PYTHON variable, else the repository's .venv, else python3 on PATH.
import { execFileSync } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readdirSync, renameSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';

const repo = resolve(import.meta.dirname, '../..');
const venv = join(repo, '.venv', 'bin', 'python');
const python = process.env.TETHER_PYTHON || (existsSync(venv) ? venv : 'python3');
const out = mkdtempSync(join(tmpdir(), 'tether-wheel-'));
try {
  execFileSync(python, ['-m', 'pip', 'wheel', '--no-deps', '--quiet', '--disable-pip-version-check', '-w', out, repo], { stdio: ['ignore', 'inherit', 'inherit'] });
  const wheels = readdirSync(out).filter((f) => f.endsWith('.whl'));
  if (wheels.length !== 1) throw new Error(`expected one wheel, found: ${wheels.join(', ') || 'none'}`);
  rmSync('daemon', { recursive: true, force: true });
  mkdirSync('daemon');
  renameSync(join(out, wheels[0]), join('daemon', wheels[0]));
  console.log(`daemon/${wheels[0]}`);
} finally {
  rmSync(out, { recursive: true, force: true });
}
