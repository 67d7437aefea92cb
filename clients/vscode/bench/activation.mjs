// What the cheap activation saves: loading the entry point VS Code runs at activation
// (dist/extension.js) against loading the rest (dist/tether.js, the language client and the
// chat), each in a fresh Node process with a stand-in for the `vscode` module, median of N
// runs. Prints the figures and their ratio; asserts nothing (run `npm run build` first).
//   node bench/activation.mjs [runs]
import { execFileSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { join } from 'node:path';

const dist = join(import.meta.dirname, '..', 'dist');
const runs = Number(process.argv[2] ?? 15);
// A `vscode` whose every member is a class or a function, so a bundle can load (not run).
const probe = `
const Module = require('module');
const handler = {
  get: (t, k) => (k === '__esModule' ? true : k === 'then' ? undefined : (t[k] ??= new Proxy(function () {}, handler))),
  construct: () => new Proxy({}, handler),
  apply: () => new Proxy(function () {}, handler),
};
const vscode = new Proxy(function () {}, handler);
const load = Module._load;
Module._load = function (request, ...rest) { return request === 'vscode' ? vscode : load.call(this, request, ...rest); };
const t = process.hrtime.bigint();
require(process.argv[1]);
process.stdout.write(String(Number(process.hrtime.bigint() - t) / 1e6));
`;

function median(file) {
  const times = [];
  for (let i = 0; i < runs; i++) times.push(Number(execFileSync(process.execPath, ['-e', probe, file], { encoding: 'utf8' })));
  times.sort((a, b) => a - b);
  return times[Math.floor(times.length / 2)];
}

for (const name of ['extension.js', 'tether.js']) if (!existsSync(join(dist, name))) throw new Error(`dist/${name} is missing: run npm run build`);
const entry = median(join(dist, 'extension.js'));
const rest = median(join(dist, 'tether.js'));
console.log(`loading at activation (dist/extension.js): ${entry.toFixed(2)} ms`);
console.log(`loading on first use    (dist/tether.js):    ${rest.toFixed(2)} ms`);
console.log(`activation loads ${(rest / entry).toFixed(0)}x less code time than loading everything would (median of ${runs} runs each)`);
