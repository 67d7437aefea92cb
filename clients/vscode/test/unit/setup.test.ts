/** First run: what the chat says when the daemon, a model or a key is missing; installing
 * the daemon; "Fix with Tether" prompts; the session list of a multi-root window. */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { describe as describeProblem, fixPrompt, worthFixing } from '../../src/core/fix';
import { PythonProbe, findUv, installPlan, missingPython, onPath, pythonNames } from '../../src/core/install';
import { toolBinDirs } from '../../src/core/resolve';
import { buildPrompt, toComposer } from '../../src/core/mentions';
import { sessionEntries } from '../../src/core/sessionList';
import { badDaemon, daemonDown, missingDaemon, modelName, modelSetup } from '../../src/core/setup';

describe('set-up card', () => {
  const notFound = { found: false as const, reason: 'not_found' as const, message: 'not found', searched: [] };

  it('no daemon: one Install button (no pipx or uv needed), then a path', () => {
    const s = missingDaemon(notFound, true);
    assert.equal(s.problem, 'no_daemon');
    assert.equal(s.title, 'Install the Tether daemon');
    assert.deepEqual(s.actions.map((a) => `${a.id}:${a.label}`), ['install:Install the Daemon', 'setPath:Set Path…', 'showLog:Show Log']);
    assert.match(s.detail, /Python 3\.11 or later, or uv/);
    const none = missingDaemon(notFound, false);
    assert.deepEqual(none.actions.map((a) => a.id), ['setPath', 'showLog'], 'a build without the wheel cannot install it');
    assert.match(none.detail, /uv tool install/);
  });

  it('a tether.path that points nowhere leads with fixing the path', () => {
    const s = missingDaemon({ ...notFound, reason: 'setting_missing', message: 'tether.path is set to "/x", but /x is not an executable file.' }, true);
    assert.deepEqual(s.actions.map((a) => a.id), ['setPath', 'install', 'showLog']);
    assert.match(s.detail, /tether\.path is set to "\/x"/);
  });

  it('a daemon too old offers to update it; one that keeps crashing, to restart it', () => {
    const old = badDaemon({ ok: false, reason: 'too_old', message: 'too old' }, true);
    assert.deepEqual(old.actions.map((a) => a.label), ['Update the Daemon', 'Set Path…', 'Show Log']);
    assert.deepEqual(daemonDown('keeps exiting').actions.map((a) => a.id), ['restart', 'showLog']);
  });

  it('no model: a key or a local model; an Anthropic model without a key: the key', () => {
    assert.equal(modelSetup({ model: null }, {})?.problem, 'no_model');
    const noKey = modelSetup({ model: 'anthropic:claude-sonnet-4-6' }, { ANTHROPIC_API_KEY: '  ' });
    assert.equal(noKey?.problem, 'no_key');
    assert.deepEqual(noKey?.actions.map((a) => a.id), ['setApiKey', 'useLocalModel']);
    assert.match(noKey?.detail ?? '', /claude-sonnet-4-6 needs an Anthropic API key/);
    assert.equal(modelSetup({ model: 'claude-opus-4' }, {})?.problem, 'no_key', 'a bare model name is Anthropic');
    assert.equal(modelSetup({ model: 'anthropic (default model)' }, { ANTHROPIC_API_KEY: 'sk' }), null);
    assert.equal(modelSetup({ model: 'anthropic:x' }, { ANTHROPIC_AUTH_TOKEN: 't' }), null);
    assert.equal(modelSetup({ model: 'openai:qwen@http://localhost:11434/v1' }, {}), null, 'local models need no key');
    assert.equal(modelSetup({ model: 'ollama:qwen2.5-coder:14b@http://127.0.0.1:11434' }, {}), null, 'Ollama needs no Anthropic key');
    assert.equal(modelSetup({ model: 'ollama:qwen' }, {}), null);
    assert.equal(modelSetup({ model: 'scripted:/s.json' }, {}), null);
  });

  it('names the model briefly for the header', () => {
    assert.equal(modelName('anthropic:claude-sonnet-4-6'), 'claude-sonnet-4-6');
    assert.equal(modelName('openai:qwen2.5-coder:14b@http://localhost:11434/v1'), 'qwen2.5-coder:14b');
    assert.equal(modelName('ollama:qwen2.5-coder:14b@http://127.0.0.1:11434'), 'qwen2.5-coder:14b');
    assert.equal(modelName('ollama:qwen'), 'qwen');
    assert.equal(modelName('scripted:/tmp/run/turns.json'), 'scripted turns.json');
    assert.equal(modelName('anthropic (default model)'), 'anthropic (default model)');
  });
});

describe('installing the daemon', () => {
  const env = '/home/u/.config/Code/User/globalStorage/tether.tether/daemon';
  const wheel = '/ext/daemon/tether-0.1.0-py3-none-any.whl';
  const py = (command: string, version?: string, venv = true): PythonProbe => ({ command, ...(version ? { version } : {}), venv });

  it('with uv: uv makes the environment (finding a Python ≥ 3.11 itself) and installs the wheel', () => {
    const plan = installPlan({ platform: 'linux', envDir: env, wheel, uv: '/home/u/.local/bin/uv', pythons: [], envExists: false });
    assert.ok(plan.ok);
    assert.deepEqual(plan.steps.map((s) => [s.command, ...s.args]), [
      ['/home/u/.local/bin/uv', 'venv', '--python', '>=3.11', env],
      ['/home/u/.local/bin/uv', 'pip', 'install', '--python', `${env}/bin/python`, '--reinstall', wheel],
    ]);
    assert.equal(plan.tether, `${env}/bin/tether`);
  });

  it('without uv: the newest Python ≥ 3.11 on PATH that can make a venv, then pip', () => {
    const pythons = [py('/usr/bin/python3.12', '3.12.1', false), py('/usr/local/bin/python3.11', '3.11.9'), py('/usr/bin/python3', '3.9.2')];
    const plan = installPlan({ platform: 'linux', envDir: env, wheel, pythons, envExists: false });
    assert.ok(plan.ok);
    assert.equal(plan.using, 'Python 3.11.9 (/usr/local/bin/python3.11)');
    assert.deepEqual(plan.steps.map((s) => [s.command, ...s.args]), [
      ['/usr/local/bin/python3.11', '-m', 'venv', env],
      [`${env}/bin/python`, '-m', 'pip', 'install', '--disable-pip-version-check', '--force-reinstall', wheel],
    ]);
  });

  it('an environment from an earlier install is updated in place', () => {
    const plan = installPlan({ platform: 'linux', envDir: env, wheel, pythons: [], envExists: true });
    assert.ok(plan.ok);
    assert.deepEqual(plan.steps.map((s) => s.command), [`${env}/bin/python`]);
    const win = installPlan({ platform: 'win32', envDir: 'C:\\x\\daemon', wheel: 'C:\\w.whl', pythons: [], envExists: true });
    assert.ok(win.ok && win.tether === 'C:\\x\\daemon\\Scripts\\tether.exe');
  });

  it('no uv and no usable Python: says exactly what was found and what to install', () => {
    const pythons = [py('/usr/bin/python3', '3.9.2'), py('/usr/bin/python3.11', '3.11.2', false), py('/home/u/.pyenv/shims/python3.12')];
    const plan = installPlan({ platform: 'linux', envDir: env, wheel, pythons, envExists: false });
    assert.equal(plan.ok, false);
    const message = plan.ok ? '' : plan.message;
    assert.match(message, /needs Python 3\.11 or later that can make a virtual environment, or uv/);
    assert.match(message, /\/usr\/bin\/python3 is Python 3\.9\.2, older than 3\.11/);
    assert.match(message, /\/usr\/bin\/python3\.11 \(Python 3\.11\.2\) cannot make a virtual environment.*sudo apt install python3\.11-venv/);
    assert.match(message, /\/home\/u\/\.pyenv\/shims\/python3\.12 does not run/);
    assert.match(missingPython([], 'darwin'), /No python3 or python is on PATH.*brew install python@3\.12/);
  });

  it('finds interpreters and uv on PATH, uv also where its installer puts it', () => {
    const files = ['/usr/bin/python3', '/usr/bin/python3.12', '/opt/bin/python3', '/home/u/.cargo/bin/uv'];
    const is = (f: string) => files.includes(f);
    assert.deepEqual(onPath(pythonNames('linux'), '/usr/bin:/opt/bin', 'linux', is), ['/usr/bin/python3.12', '/usr/bin/python3', '/opt/bin/python3']);
    assert.equal(findUv('/usr/bin', 'linux', '/home/u', is), '/home/u/.cargo/bin/uv');
    assert.equal(findUv('/usr/bin', 'linux', undefined, is), undefined);
  });

  it('looks for a tether pipx or uv installed where they put it', () => {
    assert.deepEqual(toolBinDirs({ PIPX_BIN_DIR: '/p', XDG_BIN_HOME: '/p' }, 'linux', '/home/u'), ['/p', '/home/u/.local/bin']);
    assert.deepEqual(toolBinDirs({ XDG_DATA_HOME: '/x/share' }, 'linux', '/home/u'), ['/x/bin', '/home/u/.local/bin'], 'uv\'s rule');
  });
});

describe('Fix with Tether', () => {
  const range = (line: number) => ({ start: { line, character: 4 }, end: { line, character: 9 } });

  it('one problem: says what and where, and sends its lines along', () => {
    const blocks = fixPrompt('file:///w/c.json', 'c.json', [{ range: range(2), message: 'Trailing comma', severity: 0, source: 'json', code: { value: 519 } }]);
    assert.deepEqual(blocks, [
      { type: 'text', text: 'Fix this problem in c.json: line 3, error: Trailing comma (json 519)' },
      { type: 'resource_link', uri: 'file:///w/c.json', range: { start: { line: 2, character: 0 }, end: { line: 3, character: 0 } }, name: 'c.json:3' },
    ]);
  });

  it('a file\'s problems: errors first, hints left out, the whole file along', () => {
    const problems = worthFixing([
      { range: range(9), message: 'unused', severity: 3 },
      { range: range(5), message: 'shadowed', severity: 1 },
      { range: range(7), message: 'undefined name', severity: 0, source: 'ruff', code: 'F821' },
    ]);
    assert.deepEqual(problems.map((p) => p.message), ['undefined name', 'shadowed']);
    const [text, link] = fixPrompt('file:///w/a.py', 'a.py', problems);
    assert.equal(text.type === 'text' && text.text, 'Fix these problems in a.py:\n- line 8, error: undefined name (ruff F821)\n- line 6, warning: shadowed');
    assert.deepEqual(link, { type: 'resource_link', uri: 'file:///w/a.py', name: 'a.py' });
    assert.deepEqual(fixPrompt('file:///w/a.py', 'a.py', []), []);
    assert.equal(describeProblem({ range: range(0), message: 'm', severity: 7 }), 'line 1, problem: m');
  });

  it('a prompt that cannot be sent yet goes back into the prompt box whole', () => {
    const blocks = fixPrompt('file:///w/c.json', 'c.json', [{ range: range(2), message: 'Trailing comma', severity: 0 }]);
    const kept = toComposer(blocks);
    assert.equal(kept.text, 'Fix this problem in c.json: line 3, error: Trailing comma');
    assert.deepEqual(kept.attachments, [{ uri: 'file:///w/c.json', range: blocks[1].type === 'resource_link' ? blocks[1].range : undefined, label: 'c.json:3' }]);
    assert.deepEqual(buildPrompt(kept.text, kept.attachments, () => undefined), blocks, 'and is sent as it was built');
  });
});

describe('images in the prompt', () => {
  it('become image blocks after the text and files', () => {
    const blocks = buildPrompt('what is this?', [{ image: { mimeType: 'image/png', data: 'iVBOR' }, label: 'image 1' }], () => undefined);
    assert.deepEqual(blocks, [{ type: 'text', text: 'what is this?' }, { type: 'image', mimeType: 'image/png', data: 'iVBOR' }]);
    assert.deepEqual(toComposer(blocks).attachments, [{ image: { mimeType: 'image/png', data: 'iVBOR' }, label: 'image' }]);
  });
});

describe('session list', () => {
  const info = (id: string, title: string | null, turns: number) => ({ sessionId: id, title, workspaceFolder: null, createdAt: '', updatedAt: '2024-01-01T00:00:00Z', turns });
  const now = Date.parse('2024-01-01T00:30:00Z');

  it('one folder: New session, then its sessions', () => {
    const entries = sessionEntries([{ folder: { uri: 'file:///a', name: 'a' }, sessions: [info('s1', 'Fix mean', 2), info('s2', null, 1)] }], 's2', now);
    assert.deepEqual(entries.map((e) => [e.type, e.label]), [['new', 'New session'], ['session', 'Fix mean'], ['session', '(untitled)']]);
    assert.deepEqual(entries[1], { type: 'session', label: 'Fix mean', description: '2 turns · 30 min ago', current: false, sessionId: 's1', folderUri: 'file:///a' });
    assert.equal(entries[2].type === 'session' && entries[2].current, true);
  });

  it('several folders: each under its name, with a New session of its own', () => {
    const entries = sessionEntries(
      [
        { folder: { uri: 'file:///a', name: 'api' }, sessions: [info('s1', 'one', 1)] },
        { folder: { uri: 'file:///b', name: 'web' }, sessions: [info('s2', 'two', 1)] },
      ],
      null,
      now,
    );
    assert.deepEqual(entries.map((e) => `${e.type}:${e.label}`), ['folder:api', 'new:New session in api', 'session:one', 'folder:web', 'new:New session in web', 'session:two']);
    assert.equal(entries[5].type === 'session' && entries[5].folderUri, 'file:///b');
  });
});
