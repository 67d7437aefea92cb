/**
 * First run in a real VS Code (code-server) on a machine without pipx or uv: no daemon
 * anywhere, then no model, each shown in the chat with buttons that work, while the prompt
 * the user typed stays in the box; "Install the Daemon" puts the wheel the extension ships
 * into an environment of its own with the machine's Python (venv, then pip); the key set
 * through "Tether: Set API Key" reaches the daemon, which picks its default model (the
 * header names it: claude-sonnet-4-6) and talks to a fake Anthropic Messages API (the real
 * SDK, real SSE); a PNG pasted into the prompt box reaches that API as an image block; the
 * walkthrough's tile reads whole and the walkthrough ticks off each step.
 */
import assert from 'node:assert/strict';
import { ChildProcess, spawn } from 'child_process';
import * as fs from 'fs';
import * as os from 'os';
import * as path from 'path';
import { after, before, describe, it } from 'node:test';
import { Browser, Page } from 'playwright-core';
import { daemonCommand } from '../support/daemon';
import { ARTIFACTS, CodeServer, OLDEST, SHOT_PREFIX, chromiumPath, extensionLogs, sleep, startCodeServer } from './codeServer';
import { chatFrame, launchBrowser, runCommand } from './workbench';

/** A 2×2 red PNG. */
const PNG = 'iVBORw0KGgoAAAANSUhEUgAAAAIAAAACCAIAAAD91JpzAAAAFklEQVR4nGP8z8DAwMDAxMDAwMDAAAANHQEDasKb6QAAAABJRU5ErkJggg==';

const API_SCRIPT = [
  { expect: { contains: 'Hello from the first run' }, blocks: [{ type: 'text', text: 'Hi! The key works.' }] },
  { expect: { contains: '"type": "image"' }, blocks: [{ type: 'text', text: 'A tiny red square.' }] },
];

/** The fake Messages API as its own process, on a free port. */
async function startFakeApi(dir: string): Promise<{ url: string; stop(): void; log(): string }> {
  const python = path.join(path.dirname(daemonCommand().command), 'python');
  const script = path.join(dir, 'api-script.json');
  const portFile = path.join(dir, 'api-port');
  fs.writeFileSync(script, JSON.stringify(API_SCRIPT));
  let log = '';
  const child: ChildProcess = spawn(python, ['-m', 'tether.testing.fake_anthropic', '--script', script, '--port-file', portFile], { stdio: ['ignore', 'pipe', 'pipe'] });
  child.stdout!.on('data', (d: Buffer) => (log += d.toString()));
  child.stderr!.on('data', (d: Buffer) => (log += d.toString()));
  const deadline = Date.now() + 20_000;
  while (!fs.existsSync(portFile) || !fs.readFileSync(portFile, 'utf8').trim()) {
    if (Date.now() > deadline || child.exitCode !== null) throw new Error(`the fake API did not start:\n${log}`);
    await sleep(100);
  }
  return { url: `http://127.0.0.1:${fs.readFileSync(portFile, 'utf8').trim()}`, stop: () => child.kill(), log: () => log };
}

describe(`Tether in VS Code${OLDEST ? ' 1.100 (the oldest declared)' : ''}: first run`, { timeout: 480_000 }, () => {
  let server: CodeServer;
  let api: Awaited<ReturnType<typeof startFakeApi>>;
  let browser: Browser;
  let page: Page;
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'tether-e2e-api-'));

  before(async () => {
    fs.mkdirSync(ARTIFACTS, { recursive: true });
    api = await startFakeApi(dir);
    server = await startCodeServer({
      noDaemon: true,
      // No tether.model: the daemon's own choice, once it has a key, is what the header shows.
      settings: { 'tether.model': '', 'tether.env': { ANTHROPIC_BASE_URL: api.url } },
    });
    ({ browser, page } = await launchBrowser(chromiumPath(), server.xdgEnv));
  });

  let passed = false;
  after(async () => {
    await browser?.close();
    await server?.stop();
    api?.stop();
    fs.rmSync(dir, { recursive: true, force: true });
    if (passed) fs.rmSync(server.run, { recursive: true, force: true });
    else if (server) console.log(`kept the run folder ${server.run}`);
  });

  const shot = (name: string) => page.screenshot({ path: path.join(ARTIFACTS, `${SHOT_PREFIX}${name}.png`) });

  async function step<T>(name: string, fn: () => Promise<T>): Promise<T> {
    try {
      return await fn();
    } catch (error) {
      await page.screenshot({ path: path.join(ARTIFACTS, `${SHOT_PREFIX}failure-first-run.png`) }).catch(() => undefined);
      const logs = `--- fake API\n${api.log().slice(-2000)}\n--- code-server.log\n${server.log().slice(-3000)}\n${extensionLogs(server.run)}`;
      throw new Error(`step "${name}" failed: ${error instanceof Error ? error.message : String(error)}\n${logs}`);
    }
  }

  it('walks from no daemon and no key to an answer, keeping the prompt; a pasted image reaches the API', async () => {
    const chat = chatFrame(page);
    const prompt = chat.locator('#prompt');
    const card = chat.locator('section.setup');
    const walkthrough = page.locator('.gettingStartedContainer');

    await step('the Welcome page\'s tile reads "Set up Tether" whole; the walkthrough: three steps, none done yet', async () => {
      await page.goto(server.url);
      await page.waitForSelector('.monaco-workbench .statusbar', { timeout: 60_000 });
      await runCommand(page, 'Help: Welcome');
      const tile = page.locator('.getting-started-category', { hasText: 'Set up Tether' }).first();
      // VS Code 1.100 opens its own first walkthrough instead: back to the Welcome page.
      await tile.or(page.locator('button.prev-button:visible')).first().waitFor();
      if (!(await tile.isVisible())) await page.locator('button.prev-button:visible').click();
      await tile.waitFor();
      const cut = await tile.locator('.category-title').evaluate((el) => el.scrollWidth > el.clientWidth + 1);
      assert.equal(cut, false, 'the tile\'s title is not cut');
      await shot('13b-welcome-tile');
      await page.keyboard.press('Control+W');
      await runCommand(page, 'Welcome: Open Walkthrough');
      await page.locator('.quick-input-list .monaco-list-row', { hasText: 'Set up Tether' }).click();
      for (const title of ['Install the Tether daemon', 'Set an API key or a local model', 'Send your first prompt']) {
        await walkthrough.locator('.getting-started-step', { hasText: title }).first().waitFor();
      }
      assert.equal(await walkthrough.locator('[data-done-step-id].complete').count(), 0);
      await shot('13a-walkthrough');
    });

    await step('no daemon: the chat says so with buttons, and keeps the prompt', async () => {
      await runCommand(page, 'Tether: Open Chat');
      await card.locator('h2', { hasText: 'Install the Tether daemon' }).waitFor({ timeout: 60_000 });
      await card.locator('button', { hasText: 'Set Path…' }).waitFor();
      await prompt.click();
      await prompt.pressSequentially('Hello from the first run');
      await prompt.press('Enter');
      await card.locator('.kept').waitFor();
      assert.equal(await prompt.inputValue(), 'Hello from the first run', 'the prompt is kept');
      await shot('13-first-run-no-daemon');
      await card.locator('button', { hasText: 'Show Log' }).click();
      // The Tether log, ending with where it looked.
      await page.locator('.part.panel', { hasText: '.local/bin/tether' }).first().waitFor();
    });

    await step('"Install the Daemon", with no pipx or uv, makes an environment with the machine\'s Python; then the chat asks for a model', async () => {
      await card.locator('button', { hasText: 'Install the Daemon' }).click();
      await page.locator('.notifications-toasts', { hasText: 'Installing the Tether daemon' }).first().waitFor();
      await shot('14a-installing-the-daemon');
      await card.locator('h2', { hasText: 'Choose a model' }).waitFor({ timeout: 300_000 });
      const env = path.join(server.run, 'data', 'User', 'globalStorage', 'tether.tether', 'daemon');
      assert.ok(fs.existsSync(path.join(env, 'bin', 'tether')), `the daemon is in the extension's environment ${env}`);
      assert.ok(!fs.existsSync(path.join(server.home, '.local', 'bin', 'tether')), 'nothing in the user\'s own bin');
      await page.locator('.part.panel', { hasText: '(found via managed)' }).first().waitFor();
      assert.equal(await prompt.inputValue(), 'Hello from the first run');
      await shot('14-first-run-no-key');
    });

    await step('"Set API Key" stores the key, the daemon gets it, and the kept prompt is answered', async () => {
      await card.locator('button', { hasText: 'Set API Key' }).click();
      const input = page.locator('.quick-input-widget input[type="password"]');
      await input.waitFor();
      await input.fill('sk-ant-e2e-key');
      await page.keyboard.press('Enter');
      await card.waitFor({ state: 'hidden', timeout: 60_000 });
      await page.waitForSelector('.statusbar [aria-label="Tether is idle"]', { timeout: 60_000 });
      // The daemon's default model, named in the header.
      await chat.locator('header .model', { hasText: 'claude-sonnet-4-6' }).waitFor();
      await shot('14b-header-names-the-model');
      await prompt.press('Enter');
      await chat.locator('.msg.agent', { hasText: 'Hi! The key works.' }).waitFor();
      assert.equal(await prompt.inputValue(), '');
    });

    await step('a PNG pasted into the prompt box reaches the API as an image block', async () => {
      await prompt.evaluate((el, data) => {
        const bytes = Uint8Array.from(atob(data), (c) => c.charCodeAt(0));
        const transfer = new DataTransfer();
        transfer.items.add(new File([bytes], 'image.png', { type: 'image/png' }));
        el.dispatchEvent(new ClipboardEvent('paste', { clipboardData: transfer, bubbles: true, cancelable: true }));
      }, PNG);
      await chat.locator('.composer .chip.image-chip', { hasText: 'image 1' }).waitFor();
      await prompt.pressSequentially('What is in this image?');
      await shot('15-pasted-image');
      await prompt.press('Enter');
      await chat.locator('.msg.user img.thumb').waitFor();
      // The fake API answers this turn only if the request's last user message has an image block.
      await chat.locator('.msg.agent', { hasText: 'A tiny red square.' }).waitFor();
      await shot('16-image-answered');
    });

    await step('the walkthrough ticked off each step as it was done', async () => {
      // (Opened before first use: VS Code ignores a context key that was already set when
      // its walkthrough service starts, so a walkthrough opened later shows no ticks.)
      // "Welcome" (current) or "Walkthrough: Tether" (1.100).
      await page.locator('.tabs-container .tab', { hasText: /Welcome|Walkthrough/ }).first().click();
      // All three: daemon running, model with its key, a prompt sent (VS Code then leaves
      // the finished walkthrough for its Welcome page).
      await walkthrough.locator('[data-done-step-id].complete').nth(2).waitFor();
    });
    passed = true;
  });
});
