/**
 * The extension in a real VS Code (code-server, headless Chromium): open the workspace and
 * the chat, send a prompt (with an @ mention) to the daemon running a scripted model, approve
 * the edit in the permission dialog, see the file change in the editor and undo it with
 * Ctrl+Z, attach an editor selection, cancel a second long turn, review the turn's changes,
 * undo the turn, survive a daemon crash, and keep screenshots (.e2e/: chat-view.png,
 * permission.png, workbench.png).
 */
import assert from 'node:assert/strict';
import * as fs from 'fs';
import * as path from 'path';
import { after, before, describe, it } from 'node:test';
import { Browser, Page } from 'playwright-core';
import { ARTIFACTS, CodeServer, chromiumPath, daemonPids, extensionLogs, startCodeServer } from './codeServer';
import { chatFrame, launchBrowser, quickOpen, runCommand, waitForEditorText } from './workbench';

const SCRIPT = [
  [{ type: 'text', text: 'Let me look at `mean()`.' }, { type: 'tool_use', name: 'Read', input: { file_path: 'calc/ops.py' } }],
  [{ type: 'tool_use', name: 'Edit', input: { file_path: 'calc/ops.py', old_string: '    return sum(values) / (len(values) + 1)', new_string: '    return sum(values) / len(values)' } }],
  [{ type: 'text', text: 'Fixed: **mean()** now divides by the number of values.' }],
  { chunk_delay_ms: 150, blocks: [{ type: 'text', text: 'Once upon a time '.repeat(60) }] },
];

describe('Tether in VS Code (code-server)', { timeout: 300_000 }, () => {
  let server: CodeServer;
  let browser: Browser;
  let page: Page;

  before(async () => {
    fs.mkdirSync(ARTIFACTS, { recursive: true });
    server = await startCodeServer(SCRIPT);
    ({ browser, page } = await launchBrowser(chromiumPath(), server.xdgEnv));
  });

  let passed = false;
  after(async () => {
    await browser?.close();
    await server?.stop();
    // A failed run's folder (logs, workspace, transcripts) stays for a look.
    if (passed) fs.rmSync(server.run, { recursive: true, force: true });
    else if (server) console.log(`kept the run folder ${server.run}`);
  });

  async function step<T>(name: string, fn: () => Promise<T>): Promise<T> {
    try {
      return await fn();
    } catch (error) {
      await page.screenshot({ path: path.join(ARTIFACTS, 'failure.png') }).catch(() => undefined);
      const logs = `--- code-server.log\n${server.log().slice(-3000)}\n${extensionLogs(server.run)}`;
      throw new Error(`step "${name}" failed: ${error instanceof Error ? error.message : String(error)}\n${logs}`);
    }
  }

  it('runs turns with an approved edit, undo, review, cancel, undo turn and a daemon crash', async () => {
    const file = path.join(server.workspace, 'calc/ops.py');
    const original = fs.readFileSync(file, 'utf8');
    const chat = chatFrame(page);

    await step('open the workspace; the daemon starts', async () => {
      await page.goto(server.url);
      await page.waitForSelector('.monaco-workbench .statusbar', { timeout: 60_000 });
      await page.waitForSelector('.statusbar [aria-label="Tether is idle"]', { timeout: 60_000 });
    });

    await step('open the file and the chat', async () => {
      await quickOpen(page, 'ops.py');
      await waitForEditorText(page, /\(len\(values\) \+ 1\)/);
      await runCommand(page, 'Tether: Open Chat');
      await chat.locator('#prompt').waitFor();
      // The view lives in the secondary side bar.
      await page.waitForSelector('.part.auxiliarybar iframe.webview, .part.auxiliarybar .pane-header:has-text("Chat")', { state: 'attached' });
    });

    await step('mention a file with @ and send the prompt', async () => {
      const prompt = chat.locator('#prompt');
      await prompt.click();
      await prompt.pressSequentially('Fix @ops');
      await chat.locator('#suggest [role="option"]', { hasText: 'calc/ops.py' }).first().waitFor();
      await prompt.press('Enter'); // picks the suggestion
      assert.match(await prompt.inputValue(), /^Fix @calc\/ops\.py $/);
      await prompt.pressSequentially('please');
      await prompt.press('Enter'); // sends
      await chat.locator('.msg.user', { hasText: 'Fix @calc/ops.py please' }).waitFor();
      await chat.locator('.msg.user .chip', { hasText: 'calc/ops.py' }).waitFor();
    });

    await step('approve the edit in the permission dialog', async () => {
      const dialog = page.locator('.monaco-dialog-box');
      await dialog.waitFor();
      assert.match(await dialog.innerText(), /Tether wants to: Edit calc\/ops\.py/);
      await dialog.locator('.monaco-button', { hasText: 'Review diff' }).waitFor();
      await chat.locator('.tool.status-awaiting').waitFor();
      await page.screenshot({ path: path.join(ARTIFACTS, 'permission.png') });
      await dialog.locator('.monaco-button', { hasText: 'Allow once' }).click();
    });

    await step('the edit lands in the editor and on disk; the turn finishes', async () => {
      await waitForEditorText(page, /return sum\(values\) \/ len\(values\)/);
      await chat.locator('.msg.agent', { hasText: 'now divides by the number of values' }).waitFor();
      await chat.locator('.tool.status-completed', { hasText: 'Edit calc/ops.py' }).waitFor();
      assert.match(fs.readFileSync(file, 'utf8'), /return sum\(values\) \/ len\(values\)\n/, 'saved after the edit');
      await page.waitForSelector('.statusbar [aria-label="Tether is idle"]');
    });

    await step('Ctrl+Z in the editor undoes the agent edit', async () => {
      await page.locator('.editor-group-container.active .monaco-editor .view-lines').first().click();
      await page.keyboard.press('Control+Z');
      await waitForEditorText(page, /\(len\(values\) \+ 1\)/);
    });

    await step('add the editor selection to the next prompt', async () => {
      await page.locator('.editor-group-container.active .monaco-editor .view-lines').first().click();
      await page.keyboard.press('Control+A');
      await chat.locator('button[aria-label="Add the editor selection to the prompt"]').click();
      await chat.locator('.composer .chip', { hasText: 'ops.py:1-14' }).waitFor();
    });

    await step('a second, long turn is cancelled with Stop', async () => {
      const prompt = chat.locator('#prompt');
      await prompt.click();
      await prompt.pressSequentially('Tell me a long story');
      await prompt.press('Enter');
      await chat.locator('.msg.user', { hasText: 'Tell me a long story' }).locator('.chip', { hasText: 'ops.py:1-14' }).waitFor();
      await chat.locator('.msg.agent', { hasText: 'Once upon a time' }).waitFor();
      await page.waitForSelector('.statusbar [aria-label^="Tether is working"]');
      await chat.locator('button.stop').click();
      await chat.locator('.turn-end.stop-cancelled').waitFor();
      await page.waitForSelector('.statusbar [aria-label="Tether is idle"]');
      const story = await chat.locator('.msg.agent', { hasText: 'Once upon a time' }).innerText();
      assert.ok(story.length < 'Once upon a time '.repeat(60).length, 'the story was cut short');
    });

    await step('"Review changes" opens the turn in the multi-file diff editor', async () => {
      await chat.locator('.turn-end button', { hasText: 'Review changes' }).click();
      await page.waitForSelector('.tabs-container .tab.active:has-text("Tether: Fix @calc/ops.py please")');
    });

    await step('screenshot of the chat view', async () => {
      const shot = path.join(ARTIFACTS, 'chat-view.png');
      await page.locator('.part.auxiliarybar').screenshot({ path: shot });
      await page.screenshot({ path: path.join(ARTIFACTS, 'workbench.png') });
      assert.ok(fs.statSync(shot).size > 10_000);
    });

    await step('"Undo turn" puts the file back through the editor and empties the chat', async () => {
      // Redo the agent's edit (undone with Ctrl+Z above), so the turn has a change to undo.
      await page.locator('.tabs-container .tab', { hasText: /^\s*ops\.py/ }).click();
      await page.locator('.editor-group-container.active .monaco-editor .view-lines').first().click();
      await page.keyboard.press('Control+Shift+Z');
      await waitForEditorText(page, /return sum\(values\) \/ len\(values\)/);
      await chat.locator('.msg.user', { hasText: 'Fix @calc/ops.py please' }).locator('button.undo').click();
      const dialog = page.locator('.monaco-dialog-box');
      await dialog.waitFor();
      assert.match(await dialog.innerText(), /Undo the turn "Fix @calc\/ops\.py please"\?/);
      await dialog.locator('.monaco-button', { hasText: 'Undo Turn' }).click();
      await waitForEditorText(page, /\(len\(values\) \+ 1\)/);
      await chat.locator('.empty').waitFor();
      assert.equal(fs.readFileSync(file, 'utf8'), original, 'restored and saved');
    });

    await step('a crashed daemon is restarted and the session goes on', async () => {
      // The restarted daemon resumes the session with whatever model script is there now.
      fs.writeFileSync(path.join(server.run, 'script.json'), JSON.stringify([[{ type: 'text', text: 'Back after the restart.' }]]));
      const [pid] = daemonPids(server.run);
      assert.ok(pid, 'the daemon process of this run');
      process.kill(pid, 'SIGKILL');
      await page.waitForSelector('.statusbar [aria-label^="Tether: restarting"]');
      await page.waitForSelector('.statusbar [aria-label="Tether is idle"]', { timeout: 60_000 });
      assert.notEqual(daemonPids(server.run)[0], pid);
      await chat.locator('.empty').waitFor(); // the rewound conversation, as stored on disk
      const prompt = chat.locator('#prompt');
      await prompt.click();
      await prompt.pressSequentially('Are you back?');
      await prompt.press('Enter');
      await chat.locator('.msg.agent', { hasText: 'Back after the restart.' }).waitFor();
    });
    passed = true;
  });
});

describe('Tether in VS Code without a daemon', { timeout: 180_000 }, () => {
  let server: CodeServer;
  let browser: Browser;
  let page: Page;

  before(async () => {
    server = await startCodeServer([], { 'tether.path': '/nonexistent/tether' });
    ({ browser, page } = await launchBrowser(chromiumPath(), server.xdgEnv));
  });

  after(async () => {
    await browser?.close();
    await server?.stop();
    fs.rmSync(server.run, { recursive: true, force: true });
  });

  it('explains a missing daemon in a notification whose Configure opens the setting', async () => {
    await page.goto(server.url);
    await page.waitForSelector('.monaco-workbench .statusbar', { timeout: 60_000 });
    const toast = page.locator('.notifications-toasts .notification-toast', { hasText: 'tether.path is set to "/nonexistent/tether"' });
    await toast.waitFor({ timeout: 60_000 });
    await page.waitForSelector('.statusbar [aria-label^="Tether: down"]');
    await toast.locator('.monaco-button', { hasText: 'Configure' }).click();
    // The Settings editor, filtered to the one setting.
    await page.locator('.settings-editor .setting-item-contents', { hasText: 'Path to the tether executable' }).waitFor();
    await page.screenshot({ path: path.join(ARTIFACTS, 'missing-daemon.png') });
  });
});
