/** Start-up logic: finding the daemon, checking its protocol, restarting with backoff. */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { RestartPolicy } from '../../src/core/backoff';
import { TETHER_CLIENT_CAPABILITIES, checkServer, initializationOptions } from '../../src/core/capabilities';
import { ResolveInput, resolveDaemon } from '../../src/core/resolve';

function input(files: string[], extra: Partial<ResolveInput> = {}): ResolveInput {
  return { workspaceFolders: ['/ws', '/other'], pathEnv: '/usr/local/bin:/usr/bin', platform: 'linux', home: '/home/u', isExecutable: (f) => files.includes(f), ...extra };
}

describe('finding the daemon', () => {
  it('prefers the setting, then a workspace virtualenv, then PATH', () => {
    const all = ['/opt/t/tether', '/other/.venv/bin/tether', '/usr/bin/tether'];
    assert.deepEqual(resolveDaemon(input(all, { setting: '/opt/t/tether' })), { found: true, command: '/opt/t/tether', args: ['serve'], source: 'setting' });
    assert.deepEqual(resolveDaemon(input(all)), { found: true, command: '/other/.venv/bin/tether', args: ['serve'], source: 'venv' });
    assert.deepEqual(resolveDaemon(input(['/usr/bin/tether'])), { found: true, command: '/usr/bin/tether', args: ['serve'], source: 'path' });
  });

  it('checks .venv before venv, folder by folder', () => {
    const r = resolveDaemon(input(['/ws/venv/bin/tether', '/ws/.venv/bin/tether']));
    assert.equal(r.found && r.command, '/ws/.venv/bin/tether');
  });

  it('runs a Python interpreter setting as `python -m tether serve`, expanding ~ and ${workspaceFolder}', () => {
    const r = resolveDaemon(input(['/home/u/py/bin/python3.12'], { setting: '~/py/bin/python3.12' }));
    assert.deepEqual(r, { found: true, command: '/home/u/py/bin/python3.12', args: ['-m', 'tether', 'serve'], source: 'setting' });
    const w = resolveDaemon(input(['/ws/tools/tether'], { setting: '${workspaceFolder}/tools/tether' }));
    assert.equal(w.found && w.command, '/ws/tools/tether');
    const rel = resolveDaemon(input(['/ws/bin/tether'], { setting: 'bin/tether' }));
    assert.equal(rel.found && rel.command, '/ws/bin/tether');
  });

  it('explains a setting that points nowhere, without falling back', () => {
    const r = resolveDaemon(input(['/usr/bin/tether'], { setting: '/nope/tether' }));
    assert.equal(r.found, false);
    assert.equal(!r.found && r.reason, 'setting_missing');
    assert.match(!r.found ? r.message : '', /tether\.path is set to "\/nope\/tether"/);
  });

  it('says where it looked when nothing is found', () => {
    const r = resolveDaemon(input([]));
    assert.ok(!r.found);
    assert.equal(r.reason, 'not_found');
    assert.match(r.message, /Tether: Install the Daemon/);
    assert.ok(r.searched.includes('/ws/.venv/bin/tether') && r.searched.includes('/usr/bin/tether'));
  });

  it('finds a daemon pipx or uv installed in ~/.local/bin, after PATH', () => {
    const toolDirs = ['/home/u/.local/bin'];
    const r = resolveDaemon(input(['/home/u/.local/bin/tether'], { toolDirs }));
    assert.deepEqual(r, { found: true, command: '/home/u/.local/bin/tether', args: ['serve'], source: 'tools' });
    const onPath = resolveDaemon(input(['/home/u/.local/bin/tether', '/usr/bin/tether'], { toolDirs }));
    assert.equal(onPath.found && onPath.source, 'path');
  });

  it('finds the environment "Install the Daemon" made before PATH, after the workspace', () => {
    const managed = '/home/u/.config/Code/User/globalStorage/tether.tether/daemon/bin/tether';
    const r = resolveDaemon(input([managed, '/usr/bin/tether'], { managed }));
    assert.deepEqual(r, { found: true, command: managed, args: ['serve'], source: 'managed' });
    const ws = resolveDaemon(input([managed, '/ws/.venv/bin/tether'], { managed }));
    assert.equal(ws.found && ws.source, 'venv');
  });

  it('knows Windows layouts', () => {
    const r = resolveDaemon(input(['C:\\ws\\.venv\\Scripts\\tether.exe'], { platform: 'win32', workspaceFolders: ['C:\\ws'], pathEnv: '' }));
    assert.equal(r.found && r.command, 'C:\\ws\\.venv\\Scripts\\tether.exe');
  });
});

describe('protocol check', () => {
  const result = (tether: unknown) => ({ capabilities: { experimental: { tether } } });
  it('accepts protocol 1', () => {
    assert.deepEqual(checkServer(result({ protocolVersion: 1 }), 't'), { ok: true, protocolVersion: 1, facts: { model: null, modelSource: null } });
  });
  it('reads the model the daemon will use from its start-up facts', () => {
    const c = checkServer(result({ protocolVersion: 1, model: 'anthropic:claude-sonnet-4-6', modelSource: 'initializationOptions' }), 't');
    assert.deepEqual(c.ok && c.facts, { model: 'anthropic:claude-sonnet-4-6', modelSource: 'initializationOptions' });
  });
  it('calls an older or unversioned daemon too old', () => {
    for (const tether of [{ protocolVersion: 0 }, {}]) {
      const c = checkServer(result(tether), '/x/tether');
      assert.equal(c.ok, false);
      assert.equal(!c.ok && c.reason, 'too_old');
      assert.match(!c.ok ? c.message : '', /\/x\/tether is too old/);
    }
  });
  it('rejects a server that is not Tether', () => {
    const c = checkServer({ capabilities: {} }, 'pylsp');
    assert.equal(!c.ok && c.reason, 'not_tether');
  });
  it('runs a newer protocol with a warning', () => {
    const c = checkServer(result({ protocolVersion: 2 }), 't');
    assert.ok(c.ok && c.warning);
  });
  it('declares every Tether client capability and passes settings as init options', () => {
    assert.deepEqual(TETHER_CLIENT_CAPABILITIES, { permissionRequest: true, sessionUpdates: true, saveDocuments: true, diagnostics: true });
    assert.deepEqual(initializationOptions({ model: 'scripted:/s.json', permissionMode: 'plan' }), { model: 'scripted:/s.json', permissionMode: 'plan' });
    assert.deepEqual(initializationOptions({ model: '' }), {});
  });
});

describe('restart backoff', () => {
  it('doubles up to the cap and gives up after a burst of quick crashes', () => {
    const p = new RestartPolicy({ initialMs: 1000, maxMs: 5000, stableMs: 60_000, maxAttempts: 5 });
    const delays: (number | null)[] = [];
    let now = 0;
    for (let i = 0; i < 6; i++) {
      p.started(now);
      now += 100;
      delays.push(p.crashed(now));
    }
    assert.deepEqual(delays, [1000, 2000, 4000, 5000, 5000, null]);
  });
  it('starts over after a stable run or a manual restart', () => {
    const p = new RestartPolicy({ initialMs: 1000, maxMs: 30_000, stableMs: 60_000, maxAttempts: 3 });
    p.started(0);
    assert.equal(p.crashed(10), 1000);
    p.started(10);
    assert.equal(p.crashed(20), 2000);
    p.started(20);
    assert.equal(p.crashed(70_000), 1000, 'ran a minute: healthy again');
    p.crashed(70_001);
    p.crashed(70_002);
    assert.equal(p.crashed(70_003), null);
    p.reset();
    assert.equal(p.crashed(70_004), 1000);
  });
});
