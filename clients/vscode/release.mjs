// The release artefacts, side by side in release/ (git-ignored), named by version:
//   tether-<version>.vsix                  for Open VSX / the VS Code Marketplace
//   tether-<version>-py3-none-any.whl      the daemon, for PyPI (the same wheel is inside the .vsix)
//   tether-<version>.tar.gz                its source distribution, for PyPI
//   SHA256SUMS
// Builds from this checkout and publishes nothing. Python: TETHER_PYTHON, else the
// repository's .venv, else python3; it needs `build` (a test dependency of the repository),
// which fetches the build backend (setuptools) from PyPI or pip's cache, as `pip wheel` does.
import { execFileSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { copyFileSync, existsSync, mkdirSync, readFileSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { join, resolve } from 'node:path';

const here = import.meta.dirname;
const repo = resolve(here, '../..');
const { version } = JSON.parse(readFileSync(join(here, 'package.json'), 'utf8'));
const venv = join(repo, '.venv', 'bin', 'python');
const python = process.env.TETHER_PYTHON || (existsSync(venv) ? venv : 'python3');
const out = join(here, 'release');
const run = (cmd, args, cwd = here) => execFileSync(cmd, args, { cwd, stdio: ['ignore', 'inherit', 'inherit'] });

rmSync(out, { recursive: true, force: true });
mkdirSync(out);
// The daemon's sdist, and the wheel built from it (what PyPI users get, exactly).
run(python, ['-m', 'build', '--outdir', out, repo]);
const wheels = readdirSync(out).filter((f) => f.endsWith('.whl'));
if (wheels.length !== 1) throw new Error(`expected one wheel, found: ${wheels.join(', ') || 'none'}`);
// The extension carries that very wheel ("Install the Daemon").
rmSync(join(here, 'daemon'), { recursive: true, force: true });
mkdirSync(join(here, 'daemon'));
copyFileSync(join(out, wheels[0]), join(here, 'daemon', wheels[0]));
run(join(here, 'node_modules', '.bin', 'vsce'), ['package', '--no-dependencies', '--allow-missing-repository', '-o', join(out, `tether-${version}.vsix`)]);
const sums = readdirSync(out)
  .filter((f) => f !== 'SHA256SUMS')
  .sort()
  .map((f) => `${createHash('sha256').update(readFileSync(join(out, f))).digest('hex')}  ${f}`);
writeFileSync(join(out, 'SHA256SUMS'), `${sums.join('\n')}\n`);
console.log(sums.join('\n'));
