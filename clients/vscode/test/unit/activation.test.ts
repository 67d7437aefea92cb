/**
 * Activation is cheap: the entry point registers the quick fix, the views and the commands,
 * and starts nothing (no output, no status item, no daemon, the rest of the extension not
 * even loaded) until Tether is first used. Prints how long activation took (VS Code's own
 * figure, in the real editor, is in the end-to-end test's output).
 */
import { calls, codeActionProviders, commands, statusItems, workspaceFolders } from '../support/vscodeStub';
import assert from 'node:assert/strict';
import * as fs from 'fs';
import * as path from 'path';
import { describe, it } from 'node:test';

const ROOT = path.resolve(__dirname, '../../..');
const manifest = JSON.parse(fs.readFileSync(path.join(ROOT, 'package.json'), 'utf8')) as {
  activationEvents: string[];
  contributes: { commands: { command: string }[] };
};

describe('activation', () => {
  it('registers the quick fix, the views and every command, and starts nothing', () => {
    calls.length = 0;
    workspaceFolders.length = 0;
    const providersBefore = codeActionProviders.length;
    const statusBefore = statusItems.length;
    const subscriptions: { dispose(): unknown }[] = [];
    const context = { subscriptions, extension: { packageJSON: manifest }, extensionUri: { fsPath: ROOT } };
    const began = process.hrtime.bigint();
    // eslint-disable-next-line @typescript-eslint/no-require-imports
    const entry = require('../../src/extension') as typeof import('../../src/extension');
    const loaded = process.hrtime.bigint();
    entry.activate(context as never);
    const done = process.hrtime.bigint();
    console.log(`activation: loading the entry point ${(Number(loaded - began) / 1e6).toFixed(2)} ms, activate() ${(Number(done - loaded) / 1e6).toFixed(2)} ms`);

    assert.equal(codeActionProviders.length, providersBefore + 1, 'the quick fix is offered from the start');
    for (const { command } of manifest.contributes.commands) assert.ok(commands.has(command), `${command} is registered`);
    assert.deepEqual(calls.map((c) => `${c.method} ${c.args[0]}`).sort(), ['createTreeView tether.changes', 'registerWebviewViewProvider tether.chat']);
    assert.equal(statusItems.length, statusBefore, 'no status item before first use');
    const loadedModules = Object.keys(require.cache).filter((f) => f.includes(`${path.sep}src${path.sep}`));
    assert.ok(!loadedModules.some((f) => /[/\\](tether|daemon|session)\.js$/.test(f)), `nothing of the rest is loaded: ${loadedModules.join(', ')}`);
    assert.ok(subscriptions.length >= manifest.contributes.commands.length + 3);
  });

  it('activates when any file is opened, so the light bulb offers the fix before any use', () => {
    assert.ok(manifest.activationEvents.includes('onLanguage'));
  });
});
