/** What the chat webview may ask the host: every message checked in full, and `openFile`
 * confined to the workspace (`..`, symlinks, other schemes). */
import { calls, workspaceFolders, Uri } from '../support/vscodeStub';
import assert from 'node:assert/strict';
import * as fs from 'fs';
import * as os from 'os';
import * as path from 'path';
import { after, before, beforeEach, describe, it } from 'node:test';
import { insideWorkspace } from '../../src/core/confine';
import { parseFromWebview } from '../../src/core/messages';
import { ChatRouter, RouterDeps } from '../../src/vscode/chatRouter';

describe('webview messages are checked in full', () => {
  const reasons: string[] = [];
  const parse = (m: unknown) => parseFromWebview(m, (r) => reasons.push(r));

  it('accepts each known message with its fields', () => {
    assert.deepEqual(parse({ type: 'prompt', text: 'x', attachments: [{ uri: 'file:///w/a.py', label: 'a.py' }] }), {
      type: 'prompt', text: 'x', attachments: [{ uri: 'file:///w/a.py', label: 'a.py' }],
    });
    assert.ok(parse({ type: 'openFile', uri: 'file:///w/a.py', line: undefined }), 'an unset optional field, as postMessage keeps it');
    assert.ok(parse({ type: 'answerPermission', sessionId: 's', toolCallId: 't', optionId: 'allow_once', feedback: 'why' }));
    assert.ok(parse({ type: 'focus', focused: false }));
    assert.ok(parse({ type: 'setMode', mode: 'plan' }));
    assert.ok(parse({ type: 'prompt', text: '', attachments: [{ image: { mimeType: 'image/png', data: 'AAAA' }, label: 'image 1' }] }));
  });

  it('drops unknown types, wrong field types, missing and extra fields, and says why', () => {
    const bad: unknown[] = [
      null,
      'ready',
      { type: 'toString' },
      { type: 'rm -rf' },
      { type: 'openFile' },
      { type: 'openFile', uri: 42 },
      { type: 'openFile', uri: 'file:///w/a.py', line: -1 },
      { type: 'openFile', uri: 'file:///w/a.py', line: 1.5 },
      { type: 'setMode', mode: 'yolo' },
      { type: 'setupAction', action: 'rm' },
      { type: 'answerPermission', sessionId: 's', toolCallId: 't', optionId: 7 },
      { type: 'answerPermission', toolCallId: 't', optionId: 'allow_once' },
      { type: 'focus', focused: 'yes' },
      { type: 'prompt', text: 'x', attachments: [{ uri: 'file:///a' }] },
      { type: 'prompt', text: 'x', attachments: [{ image: { mimeType: 'text/html', data: '' }, label: 'x' }] },
      { type: 'prompt', text: 'x', attachments: 'file:///a' },
      { type: 'stop', extra: true },
      { type: 'copy', text: { toString: 'x' } },
    ];
    for (const m of bad) assert.equal(parse(m), null, JSON.stringify(m));
    assert.equal(reasons.length, bad.length);
    assert.ok(reasons.some((r) => /openFile: uri: expected a string/.test(r)), reasons.join('\n'));
    assert.ok(reasons.some((r) => /unexpected field "extra"/.test(r)));
  });
});

describe('openFile stays in the workspace', () => {
  let root: string;
  let ws: string;
  let outside: string;
  const router = () => new ChatRouter({} as RouterDeps);
  const opened = () => calls.filter((c) => c.method === 'showTextDocument').map((c) => (c.args[0] as Uri).fsPath);
  const refused = () => calls.filter((c) => c.method === 'showWarningMessage').map((c) => String(c.args[0]));

  before(() => {
    root = fs.realpathSync(fs.mkdtempSync(path.join(os.tmpdir(), 'tether-confine-')));
    ws = path.join(root, 'ws');
    outside = path.join(root, 'secret.txt');
    fs.mkdirSync(path.join(ws, 'src'), { recursive: true });
    fs.writeFileSync(path.join(ws, 'src', 'a.py'), 'x = 1\n');
    fs.writeFileSync(outside, 'secret\n');
    fs.symlinkSync(outside, path.join(ws, 'link.txt'));
    fs.symlinkSync(root, path.join(ws, 'up'));
  });
  after(() => fs.rmSync(root, { recursive: true, force: true }));
  beforeEach(() => {
    calls.length = 0;
    workspaceFolders.splice(0, workspaceFolders.length, { uri: Uri.file(ws), name: 'ws' });
  });

  it('opens a file of the workspace at its line', async () => {
    await router().handle({ type: 'openFile', uri: Uri.file(path.join(ws, 'src', 'a.py')).toString(), line: 3 });
    assert.deepEqual(opened(), [path.join(ws, 'src', 'a.py')]);
    assert.deepEqual(refused(), []);
  });

  for (const [name, link] of [
    ['a file outside the workspace', () => Uri.file(outside).toString()],
    ['a path that climbs out with ..', () => `file://${ws}/src/../../secret.txt`],
    ['a symlink in the workspace that points outside', () => Uri.file(path.join(ws, 'link.txt')).toString()],
    ['a file under a symlinked folder that leads outside', () => Uri.file(path.join(ws, 'up', 'secret.txt')).toString()],
    ['another scheme', () => 'https://example.com/x'],
    ['not a URI at all', () => 'secret.txt'],
  ] as const) {
    it(`refuses ${name}, and says why`, async () => {
      await router().handle({ type: 'openFile', uri: link() });
      assert.deepEqual(opened(), []);
      assert.equal(refused().length, 1);
      assert.match(refused()[0], /opens files of this workspace only/);
    });
  }

  it('refuses everything when no folder is open', async () => {
    workspaceFolders.length = 0;
    await router().handle({ type: 'openFile', uri: Uri.file(path.join(ws, 'src', 'a.py')).toString() });
    assert.deepEqual(opened(), []);
  });
});

describe('insideWorkspace', () => {
  const real = (map: Record<string, string>) => (f: string) => (f in map ? map[f] : undefined);
  it('judges a file that does not exist yet by its folder, links included', () => {
    assert.equal(insideWorkspace('/w/new/file.py', { folders: ['/w'], platform: 'linux', realpath: real({ '/w': '/w' }) }), true);
    assert.equal(insideWorkspace('/w/out/file.py', { folders: ['/w'], platform: 'linux', realpath: real({ '/w': '/w', '/w/out': '/etc' }) }), false);
  });
  it('is case-blind on Windows, and refuses a sibling folder with the same prefix', () => {
    assert.equal(insideWorkspace('C:\\Work\\a.py', { folders: ['c:\\work'], platform: 'win32', realpath: (f) => f }), true);
    assert.equal(insideWorkspace('/work-other/a.py', { folders: ['/work'], platform: 'linux', realpath: (f) => f }), false);
  });
});
