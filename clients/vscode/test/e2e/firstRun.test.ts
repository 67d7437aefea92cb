/**
 * First run in a real VS Code (code-server): no daemon anywhere, then no API key, each shown
 * in the chat with buttons that work, while the prompt the user typed stays in the box;
 * "Install with uv" installs the daemon from the wheel the extension ships (real uv, into the
 * run's own home folder); the key set through "Tether: Set API Key" reaches the daemon, which
 * talks to a fake Anthropic Messages API (the real SDK, real SSE); a PNG pasted into the
 * prompt box reaches that API as an image block; the walkthrough ticks off each step.
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

describe(`Tether in VS Code${OLDEST ? ' 1.100 (the oldest declared)' : ''}: first run`, { timeout: 300_000 }, () => {
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
      settings: {
        'tether.model': 'anthropic:claude-sonnet-4-6',
        'tether.env': { ANTHROPIC_BASE_URL: api.url },
      },
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

    await step('the walkthrough: three steps, none done yet', async () => {
      await page.goto(server.url);
      await page.waitForSelector('.monaco-workbench .statusbar', { timeout: 60_000 });
      await runCommand(page, 'Welcome: Open Walkthrough');
      await page.locator('.quick-input-list .monaco-list-row', { hasText: 'Get started with Tether' }).click();
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

    await step('"Install with uv" installs the shipped daemon; then, without a key, the chat asks for one', async () => {
      await card.locator('button', { hasText: 'Install with uv' }).click();
      await page.locator('.notifications-toasts', { hasText: 'Installing the Tether daemon with uv' }).first().waitFor();
      await card.locator('h2', { hasText: 'Add your Anthropic API key' }).waitFor({ timeout: 180_000 });
      assert.ok(fs.existsSync(path.join(server.run, 'xdg', 'bin', 'tether')) || fs.existsSync(path.join(server.home, '.local', 'bin', 'tether')), 'uv put tether where the extension looks');
      await page.locator('.part.panel', { hasText: '(found via tools)' }).first().waitFor();
      assert.match(await card.innerText(), /claude-sonnet-4-6 needs an Anthropic API key/);
      assert.equal(await prompt.inputValue(), 'Hello from the first run');
      await chat.locator('header .model', { hasText: 'claude-sonnet-4-6' }).waitFor();
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
