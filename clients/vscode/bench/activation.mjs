// What the cheap activation saves: loading the entry point VS Code runs at activation
// (dist/extension.js) against loading the rest (dist/tether.js, the language client and the
// chat), each in a fresh Node process with a stand-in for the `vscode` module, over N runs.
// Prints the figures and their ratio; asserts nothing (run `npm run build` first).
//   node bench/activation.mjs [runs]
import { execFileSync } from 'node:child_process';
import { existsSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';

const dist = join(import.meta.dirname, '..', 'dist');
const runs = Number(process.argv[2] ?? 15);
// A `vscode` whose every member is a class or a function, so a bundle can load (not run).
const probe = `
const Module = require('module');
const handler = {
  get: (t, k) => (k === 'then' || typeof k === 'symbol' ? undefined : (t[k] ??= new Proxy(function () {}, handler))),
  construct: () => new Proxy({}, handler),
  apply: () => new Proxy(function () {}, handler),
};
// Members come from the prototype, which is how a bundle's import helper reads them.
const vscode = Object.create(new Proxy({}, handler), { __esModule: { value: true } });
const load = Module._load;
Module._load = function (request, ...rest) { return request === 'vscode' ? vscode : load.call(this, request, ...rest); };
// Node's module loader warms up on a first module of nothing in the same folder (it reads
// the package.json above it, for instance): that cost is nobody's.
require(require('path').join(require('path').dirname(process.argv[1]), '.bench-empty.js'));
const t = process.hrtime.bigint();
require(process.argv[1]);
process.stdout.write(String(Number(process.hrtime.bigint() - t) / 1e6));
`;


/** Fastest and median load time of `file` over `runs` fresh processes (the machine may be
 * shared: the fastest is the least disturbed). */
function measure(file) {
  const times = [];
  for (let i = 0; i < runs; i++) times.push(Number(execFileSync(process.execPath, ['-e', probe, file], { encoding: 'utf8' })));
  times.sort((a, b) => a - b);
  return { min: times[0], median: times[Math.floor(times.length / 2)] };
}

for (const name of ['extension.js', 'tether.js']) if (!existsSync(join(dist, name))) throw new Error(`dist/${name} is missing: run npm run build`);
writeFileSync(join(dist, '.bench-empty.js'), '');
let entry, rest;
try {
  entry = measure(join(dist, 'extension.js'));
  rest = measure(join(dist, 'tether.js'));
} finally {
  rmSync(join(dist, '.bench-empty.js'), { force: true });
}
const ms = (t) => `fastest ${t.min.toFixed(2)} ms, median ${t.median.toFixed(2)} ms`;
console.log(`loading at activation (dist/extension.js): ${ms(entry)}`);
console.log(`loading on first use  (dist/tether.js):    ${ms(rest)}`);
console.log(`ratio, fastest: ${(rest.min / entry.min).toFixed(0)}x; median: ${(rest.median / entry.median).toFixed(0)}x (${runs} fresh processes each)`);
