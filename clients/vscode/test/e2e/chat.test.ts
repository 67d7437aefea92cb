/**
 * The extension in a real VS Code (code-server, headless Chromium), in a two-folder window,
 * against the daemon running a scripted model: "Fix with Tether" in the light bulb of a fresh
 * window before any use (no daemon until it is chosen), with VS Code's activation time of
 * the cheap activation; a question asked on its card, answered there, while typing in an
 * editor approves nothing; the edit saved with the user's unsaved lines, said on the card;
 * "Review diff" and its tab closed once answered; the edit in the editor and Ctrl+Z; a 300 px
 * side bar with whole card titles, a table, and python and diff blocks in the theme's colours
 * (dark and light); a scrolled-up transcript that follows a new prompt and a "New messages
 * below" chip; a prompt queued during a turn; a reload that brings back the session and its
 * Changes; both folders' sessions in the session list; a resumed session's earlier diff; a
 * plan kept with feedback; undo of a turn; a daemon crash. Screenshots land in .e2e/.
 */
import assert from 'node:assert/strict';
import * as fs from 'fs';
import * as path from 'path';
import { after, before, describe, it } from 'node:test';
import { Browser, Page } from 'playwright-core';
import { ARTIFACTS, CodeServer, OLDEST, SHOT_PREFIX, chromiumPath, daemonPids, extensionLogs, sleep, startCodeServer } from './codeServer';
import { chatFrame, chatPart, launchBrowser, quickOpen, runCommand, setChatWidth, waitForEditorText } from './workbench';

const FIX = { file_path: 'calc/ops.py', old_string: '    return sum(values) / (len(values) + 1)', new_string: '    return sum(values) / len(values)' };
const TESTS = 'python -m unittest discover -s tests';
const TESTS_TITLE = 'Run the calculator unit tests before changing anything, to see the failure first';
const CODE = 'def mean(values):\n    return sum(values) / len(values)';
const DIFF = '--- a/calc/ops.py\n+++ b/calc/ops.py\n@@ -14 +14 @@\n-    return sum(values) / (len(values) + 1)\n+    return sum(values) / len(values)';

/** A reply that streams for a while, paragraph after paragraph. */
const STORY = Array.from({ length: 12 }, (_, i) => `Chapter ${i + 1}. ${'Once upon a time '.repeat(8)}`).join('\n\n');

/** Session 1, in the folder `ws`: read, run the tests (asked), edit (asked), answer. */
const SESSION_1 = [
  [{ type: 'text', text: 'Let me look at `mean()`.' }, { type: 'tool_use', name: 'Read', input: { file_path: 'calc/ops.py' } }],
  // Asked ten seconds in: by then the user has hidden the chat and is typing in an editor.
  { chunk_delay_ms: 10_000, blocks: [{ type: 'tool_use', name: 'Bash', input: { command: TESTS, description: TESTS_TITLE } }] },
  [{ type: 'tool_use', name: 'Edit', input: FIX }],
  [{ type: 'text', text: `Fixed: **mean()** now divides by the number of values.\n\n\`\`\`python\n${CODE}\n\`\`\`\n\n\`\`\`diff\n${DIFF}\n\`\`\`\n\n| function | argument | before | after |\n|---|---|---|---|\n| mean([2, 4]) | a list of two numbers | 2.0 | 3.0 |` }],
  { chunk_delay_ms: 150, blocks: [{ type: 'text', text: STORY }] },
  [{ type: 'text', text: 'Docstring noted.' }],
];
/** The quick fix's session, in the folder `web`. */
const FIX_SESSION = [
  [{ type: 'tool_use', name: 'Read', input: { file_path: 'config.json' } }],
  [{ type: 'tool_use', name: 'Edit', input: { file_path: 'config.json', old_string: '"port": 8080,', new_string: '"port": 8080' } }],
  [{ type: 'text', text: 'Removed the trailing comma.' }],
];
const CONFIG = '{\n  "name": "web",\n  "port": 8080,\n}\n';
/** A line the user adds to config.json and does not save before the agent edits the file. */
const UNSAVED = '  "debug": true,';
const PLAN_1 = '## Plan\n1. Add a docstring to `mean()`';
const PLAN_2 = '## Plan\n1. Add a docstring to `mean()`\n2. Say that the list **must not be empty**';
const PLAN_SESSION = [
  [{ type: 'tool_use', name: 'ExitPlanMode', input: { plan: PLAN_1 } }],
  { expect: { contains: 'mention the empty list' }, blocks: [{ type: 'tool_use', name: 'ExitPlanMode', input: { plan: PLAN_2 } }] },
  [{ type: 'text', text: 'Plan approved; starting.' }],
];

/** A turn with three changes in two files: two in calc/ops.py, one in tests/test_ops.py. */
const REVIEW_PROMPT = 'Tidy add, fix mean, test add';
/** The editor shows add() as the turn changed it / as it was (and mean() fixed, either way). */
const ADD_CHANGED = /^(?=[\s\S]*total = a \+ b)(?=[\s\S]*return total)(?![\s\S]*return a \+ b)(?=[\s\S]*\/ len\(values\))/;
const ADD_UNDONE = /^(?![\s\S]*total = a \+ b)(?![\s\S]*return total)(?=[\s\S]*return a \+ b)(?=[\s\S]*\/ len\(values\))/;
const REVIEW_SESSION = [
  [{ type: 'tool_use', name: 'Read', input: { file_path: 'calc/ops.py' } }, { type: 'tool_use', name: 'Read', input: { file_path: 'tests/test_ops.py' } }],
  [{ type: 'tool_use', name: 'Edit', input: { file_path: 'calc/ops.py', old_string: '    return a + b', new_string: '    total = a + b\n    return total' } }],
  [{ type: 'tool_use', name: 'Edit', input: FIX }],
  [{ type: 'tool_use', name: 'Edit', input: { file_path: 'tests/test_ops.py', old_string: '        self.assertEqual(add(2, 3), 5)\n', new_string: '        self.assertEqual(add(2, 3), 5)\n        self.assertEqual(add(-1, 1), 0)\n' } }],
  [{ type: 'text', text: 'Three changes in two files.' }],
];

describe(`Tether in VS Code${OLDEST ? ' 1.100 (the oldest declared)' : ''}: a two-folder window`, { timeout: 600_000 }, () => {
  let server: CodeServer;
  let browser: Browser;
  let page: Page;

  before(async () => {
    fs.mkdirSync(ARTIFACTS, { recursive: true });
    server = await startCodeServer({ script: FIX_SESSION, secondFolder: { 'config.json': CONFIG } });
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

  const shot = (name: string) => page.screenshot({ path: path.join(ARTIFACTS, `${SHOT_PREFIX}${name}.png`) });
  const setScript = (turns: unknown[]) => fs.writeFileSync(server.scriptFile, JSON.stringify(turns));

  async function step<T>(name: string, fn: () => Promise<T>): Promise<T> {
    try {
      return await fn();
    } catch (error) {
      await page.screenshot({ path: path.join(ARTIFACTS, `${SHOT_PREFIX}failure.png`) }).catch(() => undefined);
      const chatText = await chatFrame(page).locator('#app').innerText({ timeout: 2000 }).catch(() => '(no chat)');
      const logs = `--- chat\n${chatText.slice(-4000)}\n--- code-server.log\n${server.log().slice(-3000)}\n${extensionLogs(server.run)}`;
      throw new Error(`step "${name}" failed: ${error instanceof Error ? error.message : String(error)}\n${logs}`);
    }
  }

  it('works through a session from first use to a crash', async () => {
    const file = path.join(server.workspace, 'calc/ops.py');
    const original = fs.readFileSync(file, 'utf8');
    const chat = chatFrame(page);
    const prompt = chat.locator('#prompt');
    const log = chat.locator('main.log');
    const idle = '.statusbar [aria-label="Tether is idle"]';
    const dialog = page.locator('.monaco-dialog-box');
    async function send(text: string): Promise<void> {
      await prompt.click();
      await prompt.pressSequentially(text);
      await prompt.press('Enter');
    }
    /** Put the caret on the error and open the light bulb's menu, until it offers the fix
     * (the squiggle is redrawn as the text changes, and the actions are computed after the
     * caret moves: try again until both have settled). */
    async function openQuickFix(): Promise<void> {
      const squiggle = page.locator('.editor-group-container.active .squiggly-error').first();
      const fix = page.locator('.action-widget .monaco-list-row', { hasText: 'Fix with Tether' });
      for (let attempt = 1; ; attempt++) {
        try {
          await squiggle.click({ force: true, timeout: 3000 });
          await page.keyboard.press('Control+.');
          await fix.waitFor({ timeout: 5000 });
          return;
        } catch (error) {
          if (attempt === 6) throw error;
          await page.keyboard.press('Escape');
          await sleep(500);
        }
      }
    }
    /** The log's distance from its bottom, in px. */
    const fromBottom = () => log.evaluate((el) => el.scrollHeight - el.scrollTop - el.clientHeight);

    await step('the window opens without starting Tether; the chat has its own activity-bar entry', async () => {
      await page.goto(server.url);
      await page.waitForSelector('.monaco-workbench .statusbar', { timeout: 60_000 });
      await page.waitForSelector('.explorer-folders-view .monaco-list-row', { timeout: 60_000 });
      await page.locator('.activitybar .action-item[role="tab"] [aria-label^="Tether"], .activitybar .action-label[aria-label^="Tether"]').first().waitFor();
      assert.deepEqual(daemonPids(server.run), [], 'no daemon before first use');
      assert.equal(await page.locator('.statusbar [aria-label^="Tether"]').count(), 0, 'no status item before first use');
      await shot('01-before-first-use');
    });

    await step('a fresh window offers "Fix with Tether" in the light bulb before any use, and starts nothing for it', async () => {
      await quickOpen(page, 'config.json');
      const squiggle = page.locator('.editor-group-container.active .squiggly-error').first();
      await squiggle.waitFor({ timeout: 30_000 });
      // The user adds a line and does not save it; the agent's edit will be saved with it.
      await page.locator('.editor-group-container.active .monaco-editor .view-lines').first().click();
      await page.keyboard.press('Control+Home');
      await page.keyboard.press('End');
      await page.keyboard.press('Enter');
      await page.keyboard.type(UNSAVED.trim());
      await openQuickFix();
      assert.deepEqual(daemonPids(server.run), [], 'offered without a daemon');
      assert.equal(await page.locator('.statusbar [aria-label^="Tether"]').count(), 0, 'nothing started');
      await shot('07-quick-fix-before-first-use');
      await page.keyboard.press('Escape');
      const times = await activationTimes(page, ['Tether', 'Emmet']);
      console.log(`VS Code's activation time (code loading + activate()), activated by the same onLanguage event: Tether ${times.Tether}, Emmet (built in, for comparison) ${times.Emmet}`);
    });

    await step('choosing it is the first use: the daemon starts, the chat opens, the question is its card, and the edit is saved with the user\'s unsaved line', async () => {
      await openQuickFix();
      await page.keyboard.press('Enter'); // the only, focused, entry
      await chat.locator('.msg.user', { hasText: 'Fix this problem in' }).waitFor({ timeout: 60_000 });
      assert.equal(daemonPids(server.run).length, 1);
      await chat.locator('header .model', { hasText: 'scripted script.json' }).waitFor();
      const card = chat.locator('.tool.status-awaiting', { hasText: 'Edit config.json' });
      await card.locator('.question button', { hasText: 'Allow once' }).waitFor();
      assert.equal(await dialog.count(), 0, 'no modal: the card is the question');
      await card.locator('.question button', { hasText: 'Allow once' }).click();
      await chat.locator('.msg.agent', { hasText: 'Removed the trailing comma.' }).waitFor();
      await waitForEditorText(page, /"port": 8080\s*\}/);
      assert.equal(fs.readFileSync(path.join(server.second!, 'config.json'), 'utf8'), `{\n${UNSAVED}\n  "name": "web",\n  "port": 8080\n}\n`);
      await chat.locator('.tool', { hasText: 'Edit config.json' }).locator('.saved-user-edits', { hasText: 'unsaved changes to config.json' }).waitFor();
      await chat.locator('header .session-folder', { hasText: 'web' }).waitFor();
      await page.waitForSelector(idle);
      await shot('08-fixed-with-tether-saved-unsaved-line');
    });

    await step('mention a file with @ and send the prompt in a new session of the other folder', async () => {
      setScript(SESSION_1);
      await quickOpen(page, 'ops.py');
      await waitForEditorText(page, /\(len\(values\) \+ 1\)/);
      await runCommand(page, 'Tether: New Session');
      await chat.locator('.empty').waitFor();
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

    await step('typing in an editor while a question arrives approves nothing; with the chat hidden, a notification points to the card, which answers it', async () => {
      // The user hides the chat and goes on working in README.md, typing the keys a focused
      // "Allow" would take.
      await page.locator('.editor-group-container.active .monaco-editor .view-lines').first().click();
      await page.keyboard.press('Control+B');
      await page.locator('.part.sidebar').waitFor({ state: 'hidden' });
      await quickOpen(page, 'README.md');
      await page.locator('.editor-group-container.active .monaco-editor .view-lines').first().click();
      await page.keyboard.press('Control+End');
      const toast = page.locator('.notifications-toasts .notification-toast', { hasText: 'Tether needs your approval' });
      const typeSome = async () => {
        await page.keyboard.type(' y', { delay: 20 });
        await page.keyboard.press('Enter');
      };
      const asked = page.locator('.statusbar [aria-label^="Tether is waiting for your approval"]');
      assert.equal(await asked.count(), 0, 'the question comes while the user types, not before');
      for (let i = 0; i < 300 && !(await asked.count()); i++) await typeSome();
      await toast.waitFor({ timeout: 5000 });
      for (let i = 0; i < 5; i++) await typeSome();
      assert.equal(await dialog.count(), 0, 'no dialog took the focus');
      await waitForEditorText(page, /( y\n?\s*){5}/);
      assert.equal(await page.locator('.editor-group-container.active .monaco-editor.focused').count(), 1, 'the keys went to the editor, and it keeps the focus');
      await page.waitForSelector('.statusbar [aria-label^="Tether is waiting for your approval"]');
      await shot('02a-question-while-the-chat-is-hidden');
      await page.keyboard.press('Control+S');
      await toast.locator('.monaco-button', { hasText: 'Show in Chat' }).click();
      const card = chat.locator('.tool.status-awaiting', { hasText: TESTS_TITLE });
      await card.waitFor();
      assert.equal(await card.count(), 1, 'still asking: nothing was approved');
      await card.locator('.question .rule-meaning').waitFor();
      await shot('02-typing-while-asked-approves-nothing');
      await card.locator('.question button', { hasText: 'Allow once' }).click();
      await chat.locator('.tool', { hasText: TESTS_TITLE }).locator('.exit').waitFor();
    });

    await step('"Review diff" on the card opens the proposed change; answering closes that tab', async () => {
      const card = chat.locator('.tool.status-awaiting', { hasText: 'Edit calc/ops.py' });
      await card.waitFor();
      assert.equal(await dialog.count(), 0);
      const always = card.locator('.question button[data-kind="allow_always"]');
      assert.match(await always.innerText(), /Always allow\s*Edit\(\/calc\/ops\.py\)/);
      assert.match(await card.locator('.rule-meaning').innerText(), /editing calc\/ops\.py in the folder ws/);
      await card.locator('.question .review-diff').click();
      const proposed = page.locator('.tabs-container .tab', { hasText: '(proposed by Tether)' });
      await proposed.waitFor();
      await page.waitForSelector('.monaco-diff-editor');
      await shot('04-review-diff-from-the-card');
      await card.locator('.question button', { hasText: 'Allow once' }).click();
      await proposed.waitFor({ state: 'detached' });
    });

    await step('the edit lands in the editor and on disk; the turn finishes', async () => {
      await chat.locator('.msg.agent', { hasText: 'now divides by the number of values' }).waitFor();
      await chat.locator('.tool.status-completed', { hasText: 'Edit calc/ops.py' }).waitFor();
      assert.match(fs.readFileSync(file, 'utf8'), /return sum\(values\) \/ len\(values\)\n/, 'saved after the edit');
      await page.waitForSelector(idle);
      await page.locator('.tabs-container .tab').filter({ hasText: 'ops.py' }).first().click();
      await waitForEditorText(page, /return sum\(values\) \/ len\(values\)/);
      // The turn's change, pending review: Keep / Undo above it (once VS Code has asked for them).
      await page.locator('.editor-group-container.active .codelens-decoration a', { hasText: 'Keep' }).waitFor();
    });

    await step('Ctrl+Z in the editor undoes the agent edit, Ctrl+Shift+Z brings it back', async () => {
      await page.locator('.editor-group-container.active .view-line', { hasText: 'def add' }).click();
      await page.keyboard.press('Control+Z');
      await waitForEditorText(page, /\(len\(values\) \+ 1\)/);
      await page.keyboard.press('Control+Shift+Z');
      await waitForEditorText(page, /return sum\(values\) \/ len\(values\)/);
      await page.keyboard.press('Control+S');
    });

    await step('add the editor selection to the next prompt', async () => {
      await page.locator('.editor-group-container.active .monaco-editor .view-lines').first().click();
      await page.keyboard.press('Control+A');
      await chat.locator('button[aria-label="Add the editor selection to the prompt"]').click();
      await chat.locator('.composer .chip', { hasText: 'ops.py:1-14' }).waitFor();
    });

    await step('in a 300 px side bar, card titles read whole, the table keeps its words, and the code block copies', async () => {
      await setChatWidth(page, 520);
      const wide = await chat.locator('body').evaluate((b) => b.clientWidth);
      assert.ok(wide > 450, `the chat is ${wide} px wide`);
      await setChatWidth(page, 300);
      const width = await chat.locator('body').evaluate((b) => b.clientWidth);
      assert.ok(width >= 285 && width <= 315, `the chat is ${width} px wide`);
      const cut = await chat.locator('.tool-title, .tool-status').evaluateAll((els) =>
        els.filter((el) => el.scrollWidth > el.clientWidth + 1).map((el) => el.textContent),
      );
      assert.deepEqual(cut, [], 'no title or status is cut');
      const read = chat.locator('.tool', { hasText: 'Read calc/ops.py' });
      assert.match(await read.locator('.tool-status').innerText(), /Read 1[0-9] lines/);
      const block = chat.locator('.code-block', { hasText: 'def mean' });
      assert.ok(await block.locator('.hljs-keyword', { hasText: 'def' }).count(), 'highlighted');
      // Headers on one line each (never broken mid-word); the table scrolls sideways instead.
      const headers = await chat.locator('.msg.agent table th').evaluateAll((els) => els.map((el) => ({ text: el.textContent, lines: Math.round(el.getBoundingClientRect().height / parseFloat(getComputedStyle(el).lineHeight)) })));
      assert.deepEqual(headers.map((h) => h.text), ['function', 'argument', 'before', 'after']);
      assert.ok(headers.every((h) => h.lines <= 1), JSON.stringify(headers));
      const cells = await chat.locator('.msg.agent table td').evaluateAll((els) => els.map((el) => el.textContent ?? ''));
      assert.ok(cells.includes('a list of two numbers'));
      await chat.locator('.tool', { hasText: TESTS_TITLE }).locator('summary').scrollIntoViewIfNeeded();
      await shot('05-narrow-side-bar-titles');
      await chat.locator('.msg.agent table').scrollIntoViewIfNeeded();
      await shot('05-narrow-side-bar-table');
      await block.locator('.code-head').scrollIntoViewIfNeeded();
      await shot('05-narrow-side-bar-code-block');
      await block.locator('button.copy').click();
      await block.locator('button.copy.copied').waitFor();
      let copied = '';
      for (let i = 0; i < 50 && !copied; i++, await sleep(100)) copied = await page.evaluate(() => navigator.clipboard.readText());
      assert.equal(copied.trimEnd(), CODE);
    });

    await step('python and diff blocks in the theme\'s colours, dark and light', async () => {
      await setChatWidth(page, 480);
      const diff = chat.locator('.code-block', { hasText: '+++ b/calc/ops.py' });
      await diff.scrollIntoViewIfNeeded();
      for (const theme of ['dark', 'light'] as const) {
        // As a user switches: the theme picker.
        await page.keyboard.press('F1');
        await page.waitForSelector('.quick-input-widget', { state: 'visible' });
        await page.keyboard.type('Preferences: Color Theme');
        // That command exactly (not "Browse Color Themes in Marketplace", which also matches).
        await page.locator('.quick-input-list .monaco-list-row').filter({ has: page.locator('.label-name', { hasText: /^Preferences: Color Theme$/ }) }).click();
        const label = theme === 'dark' ? 'Dark Modern' : 'Light Modern';
        await page.keyboard.type(label);
        await page.locator('.quick-input-list .monaco-list-row.focused', { hasText: label }).waitFor();
        await page.keyboard.press('Enter');
        await page.waitForSelector(theme === 'dark' ? '.monaco-workbench.vs-dark' : '.monaco-workbench.vs:not(.vs-dark)', { timeout: 30_000 });
        await sleep(500); // the webview takes the new theme's variables
        const colours = await chat.locator('body').evaluate(() => {
          const rgb = (sel: string) => {
            const el = document.querySelector(sel);
            const m = el ? getComputedStyle(el).color.match(/\d+(\.\d+)?/g) : null;
            return m ? m.slice(0, 3).map(Number) : null;
          };
          return {
            text: rgb('.msg.agent p'),
            keyword: rgb('.code-block .hljs-keyword'),
            title: rgb('.code-block .hljs-title'),
            builtin: rgb('.code-block .hljs-built_in'),
            added: rgb('.code-block .hljs-addition'),
            removed: rgb('.code-block .hljs-deletion'),
          };
        });
        const same = (a: number[] | null, b: number[] | null) => JSON.stringify(a) === JSON.stringify(b);
        assert.ok(colours.keyword && colours.added && colours.removed && colours.text, JSON.stringify(colours));
        assert.ok(!same(colours.keyword, colours.text), `${theme}: keywords stand out from the text: ${JSON.stringify(colours)}`);
        assert.ok(!same(colours.title, colours.text) && !same(colours.builtin, colours.text), `${theme}: ${JSON.stringify(colours)}`);
        const [ar, ag] = colours.added!;
        const [rr, rg] = colours.removed!;
        assert.ok(ag > ar && rr > rg, `${theme}: added lines green, removed lines red: ${JSON.stringify(colours)}`);
        console.log(`${theme} theme colours: ${JSON.stringify(colours)}`);
        await chat.locator('.code-block', { hasText: 'def mean' }).scrollIntoViewIfNeeded();
        await shot(`19-code-colours-${theme}`);
      }
    });

    await step('a scrolled-up transcript follows the new prompt; "New messages below" shows while scrolled up', async () => {
      await log.evaluate((el) => (el.scrollTop = 0));
      assert.ok((await fromBottom()) > 100, 'scrolled up');
      await send('Tell me a long story');
      const asked = chat.locator('.msg.user', { hasText: 'Tell me a long story' });
      await asked.locator('.chip', { hasText: 'ops.py:1-14' }).waitFor();
      await chat.locator('.msg.agent', { hasText: 'Once upon a time' }).waitFor();
      assert.ok((await fromBottom()) < 40, 'down at the new prompt and its answer');
      assert.ok(await asked.isVisible());
      const inView = await asked.evaluate((el) => {
        const r = el.getBoundingClientRect();
        return r.bottom > 0 && r.top < window.innerHeight;
      });
      assert.ok(inView, 'the new prompt is in view');
      await page.waitForSelector('.statusbar [aria-label^="Tether is working"]');
      // Scrolled up while the story streams: it stays put, and the chip says there is more.
      await log.evaluate((el) => (el.scrollTop = 0));
      await chat.locator('button.new-below').waitFor();
      await sleep(400);
      assert.ok((await log.evaluate((el) => el.scrollTop)) < 50, 'the view stays where the user put it');
      await shot('06a-new-messages-below');
      await chat.locator('button.new-below').click();
      assert.ok((await fromBottom()) < 40);
      // A selection in the reply survives the text that streams in after it.
      const first = chat.locator('.msg.agent p', { hasText: 'Chapter 1.' });
      await first.evaluate((p) => {
        const range = document.createRange();
        range.selectNodeContents(p);
        getSelection()!.removeAllRanges();
        getSelection()!.addRange(range);
      });
      const selected = await first.evaluate(() => getSelection()!.toString());
      assert.match(selected, /^Chapter 1\. Once upon a time/);
      const later = await chat.locator('.msg.agent p', { hasText: /^Chapter \d+\./ }).count();
      await chat.locator('.msg.agent p', { hasText: `Chapter ${later + 2}.` }).waitFor();
      assert.equal(await first.evaluate(() => getSelection()!.toString()), selected, 'still selected after two more paragraphs');
      assert.ok(await first.evaluate((p) => p.isConnected && getSelection()!.containsNode(p, true)));
    });

    await step('a prompt sent during a turn shows as queued at once; Stop ends the turn; then it runs', async () => {
      await prompt.pressSequentially('Also add a docstring');
      await prompt.press('Enter');
      await chat.locator('.queue .queued', { hasText: 'Also add a docstring' }).waitFor({ timeout: 1000 });
      await shot('06-queued-prompt');
      await chat.locator('button.stop').click();
      await chat.locator('.turn-end.stop-cancelled').waitFor();
      // The stopped turn never read it: it is sent again as a turn of its own.
      await chat.locator('.msg.agent', { hasText: 'Docstring noted.' }).waitFor();
      await chat.locator('.queue .queued').waitFor({ state: 'detached' });
      await page.waitForSelector(idle);
    });

    await step('a reload brings back the session and its Changes', async () => {
      await page.reload();
      await page.waitForSelector(idle, { timeout: 60_000 });
      await chat.locator('.msg.user', { hasText: 'Fix @calc/ops.py please' }).waitFor();
      await chat.locator('.tool', { hasText: 'Edit calc/ops.py' }).locator('.link.diff', { hasText: 'ops.py' }).waitFor();
      const part = await chatPart(page);
      const header = part.locator('.pane-header', { hasText: 'Changes' });
      if ((await header.getAttribute('aria-expanded')) !== 'true') await header.click();
      await part.locator('.monaco-list-row', { hasText: 'Fix @calc/ops.py please' }).waitFor();
      await part.locator('.monaco-list-row', { hasText: 'ops.py' }).filter({ hasText: '+1 −1' }).waitFor();
      await shot('09-reload-restores-session-and-changes');
    });

    await step('the session list shows both folders\' sessions; a resumed session shows its earlier diff', async () => {
      await runCommand(page, 'Tether: Resume Session');
      const list = page.locator('.quick-input-widget');
      await list.locator('.monaco-list-row', { hasText: 'Fix @calc/ops.py please' }).waitFor();
      await list.locator('.monaco-list-row', { hasText: 'Fix this problem in' }).waitFor();
      const text = await list.innerText();
      for (const label of ['New session in ws', 'New session in web']) assert.ok(text.includes(label), `${label} in:\n${text}`);
      await shot('10-sessions-of-both-folders');
      await list.locator('.monaco-list-row', { hasText: 'Fix this problem in' }).click();
      await chat.locator('header .session-folder', { hasText: 'web' }).waitFor();
      await runCommand(page, 'Tether: Resume Session');
      await list.locator('.monaco-list-row', { hasText: 'Fix @calc/ops.py please' }).click();
      await chat.locator('header .session-folder', { hasText: 'ws' }).waitFor();
      const diff = chat.locator('.tool', { hasText: 'Edit calc/ops.py' }).locator('.link.diff', { hasText: 'ops.py' });
      await diff.waitFor();
      assert.match(await diff.innerText(), /\+1\s+−1/);
      const bash = chat.locator('.tool', { hasText: TESTS_TITLE });
      assert.match(await bash.locator('summary').innerText(), /exit code 1/, 'the exit code of the earlier run');
      await diff.click();
      await page.waitForSelector('.tabs-container .tab.active:has-text("ops.py (Edit calc/ops.py)")');
      await shot('11-resumed-session-earlier-diff');
    });

    await step('undo the first turn of the resumed session: files back, title gone', async () => {
      await chat.locator('.msg.user', { hasText: 'Fix @calc/ops.py please' }).locator('button.undo').click();
      const dialog = page.locator('.monaco-dialog-box');
      await dialog.waitFor();
      assert.match(await dialog.innerText(), /Undo the turn "Fix @calc\/ops\.py please"\?/);
      await dialog.locator('.monaco-button', { hasText: 'Undo Turn' }).click();
      await chat.locator('.empty').waitFor();
      await chat.locator('header .session-title', { hasText: 'New session' }).waitFor();
      assert.equal(fs.readFileSync(file, 'utf8'), original, 'restored and saved');
    });

    await step('a crashed daemon is restarted and the session goes on', async () => {
      // The restarted daemon resumes the session with whatever model script is there now.
      setScript([[{ type: 'text', text: 'Back after the restart.' }]]);
      const [pid] = daemonPids(server.run);
      assert.ok(pid, 'the daemon process of this run');
      process.kill(pid, 'SIGKILL');
      await page.waitForSelector('.statusbar [aria-label^="Tether: restarting"]');
      await page.waitForSelector(idle, { timeout: 60_000 });
      assert.notEqual(daemonPids(server.run)[0], pid);
      await chat.locator('.empty').waitFor(); // the rewound conversation, as stored on disk
      await send('Are you back?');
      await chat.locator('.msg.agent', { hasText: 'Back after the restart.' }).waitFor();
      await shot('12-after-a-crash');
    });

    await step('a plan kept with feedback stays in the chat, the next plan arrives, and starts with accept edits', async () => {
      setScript(PLAN_SESSION);
      await runCommand(page, 'Tether: New Session');
      await chat.locator('.empty').waitFor();
      await chat.locator('#mode').selectOption('plan');
      await send('Plan a docstring for mean');
      const first = chat.locator('.tool[data-kind="plan"]').first();
      await first.locator('.plan-text h2', { hasText: 'Plan' }).waitFor();
      assert.ok(await first.locator('.plan-text code', { hasText: 'mean()' }).count(), 'the plan is rendered Markdown');
      assert.equal(await page.locator('.monaco-dialog-box').count(), 0, 'a plan is not a modal');
      const options = await first.locator('.question .choices button').allInnerTexts();
      assert.deepEqual(options.map((o) => o.trim()), ['Start (ask before edits)', 'Start (accept edits)', 'Keep planning']);
      await first.locator('textarea.feedback').fill('Please also mention the empty list');
      await first.locator('.question button', { hasText: 'Keep planning' }).click();
      const second = chat.locator('.tool[data-kind="plan"]').nth(1);
      await second.locator('.question button', { hasText: 'Start (accept edits)' }).waitFor();
      assert.match(await first.innerText(), /Add a docstring/, 'the kept plan stays');
      assert.match(await first.innerText(), /You answered: Keep planning[\s\S]*Please also mention the empty list/);
      await second.locator('strong', { hasText: 'must not be empty' }).waitFor();
      await shot('17-plan-kept-with-feedback');
      await second.locator('.question button', { hasText: 'Start (accept edits)' }).click();
      await chat.locator('.msg.agent', { hasText: 'Plan approved; starting.' }).waitFor();
      assert.equal(await chat.locator('#mode').inputValue(), 'acceptEdits');
      await shot('18-plan-started');
    });

    await step('a turn\'s three changes in two files: reviewed in the multi-diff editor, one undone from its CodeLens (Ctrl+Z takes it back), one kept from the keyboard, one undone in the Changes view, with the counts', async () => {
      const tests = path.join(server.workspace, 'tests/test_ops.py');
      const testsBefore = fs.readFileSync(tests, 'utf8');
      assert.equal(fs.readFileSync(file, 'utf8'), original);
      setScript(REVIEW_SESSION);
      await quickOpen(page, 'calc/ops.py'); // the new session is this folder's
      await runCommand(page, 'Tether: New Session');
      await chat.locator('.empty').waitFor();
      await chat.locator('#mode').selectOption('acceptEdits');
      await send(REVIEW_PROMPT);
      await chat.locator('.msg.agent', { hasText: 'Three changes in two files.' }).waitFor();
      await page.waitForSelector(idle);
      // The turn card's "Review changes": both files in VS Code's multi-file diff editor.
      await chat.locator('.turn-end button', { hasText: 'Review changes' }).last().click();
      const multi = page.locator('.multiDiffEditor');
      await multi.waitFor();
      await page.locator('.tabs-container .tab.active', { hasText: 'Tether: Tidy add' }).waitFor();
      await multi.getByText('test_ops.py').first().waitFor();
      await multi.getByText('ops.py', { exact: true }).first().waitFor();
      await shot('20-turn-review-multi-diff');
      await page.keyboard.press('Control+W');

      // In the editor: each pending change decorated, with Keep / Undo above it.
      await openFile(page, 'calc/ops.py');
      await page.keyboard.press('Control+Home'); // no selection left from before
      // (All of: the editor's line elements are not in line order.)
      await waitForEditorText(page, /^(?=[\s\S]*total = a \+ b)(?=[\s\S]*return sum\(values\) \/ len\(values\))/);
      const active = page.locator('.editor-group-container.active');
      const lens = (text: RegExp) => active.locator('.codelens-decoration a', { hasText: text });
      await lens(/Keep all 2 Tether changes/).waitFor();
      assert.equal(await lens(/^\s*Undo\s*$/).count(), 2, 'an Undo per change');
      assert.ok((await active.locator('.view-overlays .cdr[class*="ced-"]').count()) >= 3, 'the changed lines have a background');
      await shot('21-changes-in-the-editor');
      // Undo the first change (add) from its CodeLens: the topmost "Undo" (the file's is "Undo all").
      // The element itself is clicked, not the n-th match: lenses drawn again in between
      // (a changes update) may come in another order, and a redrawn one is tried again.
      for (let attempt = 1; ; attempt++) {
        const undos = await lens(/^\s*Undo\s*$/).elementHandles();
        const tops = await Promise.all(undos.map(async (u) => (await u.boundingBox())?.y ?? Infinity));
        try {
          await undos[tops.indexOf(Math.min(...tops))].click({ timeout: 2000 });
          break;
        } catch (error) {
          if (attempt === 5) throw error;
        }
      }
      await waitForEditorText(page, ADD_UNDONE);
      // Saved right after the edit (the daemon asks the editor to save it).
      const onDisk = await fileReads(file, /def add\(a: float, b: float\) -> float:\n    return a \+ b\n/);
      assert.match(onDisk, /return sum\(values\) \/ len\(values\)/, 'the other change stays');
      await lens(/^\s*Undo\s*$/).nth(1).waitFor({ state: 'detached' });
      await shot('22-undone-from-the-codelens');
      // One versioned edit: Ctrl+Z brings the change back in the buffer, Ctrl+Shift+Z undoes it again.
      await page.locator('.editor-group-container.active .monaco-editor .view-lines').first().click();
      await page.keyboard.press('Control+Z');
      await waitForEditorText(page, ADD_CHANGED);
      await lens(/^\s*Undo\s*$/).nth(1).waitFor(); // pending again
      await page.keyboard.press('Control+Shift+Z');
      await waitForEditorText(page, ADD_UNDONE);
      await page.keyboard.press('Control+S');
      await lens(/^\s*Undo\s*$/).nth(1).waitFor({ state: 'detached' });

      // From the top of the file, the next change is mean's; keep it from the keyboard.
      await page.keyboard.press('Control+Home');
      await page.keyboard.press('Control+Alt+BracketRight');
      await page.locator('.statusbar-item', { hasText: 'Ln 14, Col 1' }).waitFor();
      await page.keyboard.press('Control+Alt+Y');
      await lens(/Undo/).first().waitFor({ state: 'detached' });
      assert.match(fs.readFileSync(file, 'utf8'), /return sum\(values\) \/ len\(values\)/, 'kept: the text stays');

      // The third from the Changes view: its row's inline Undo.
      const part = await chatPart(page);
      const header = part.locator('.pane-header', { hasText: 'Changes' });
      if ((await header.getAttribute('aria-expanded')) !== 'true') await header.click();
      // Room for the whole tree: the chat pane folded away.
      const chatHeader = part.locator('.pane-header', { hasText: 'Chat' });
      if ((await chatHeader.getAttribute('aria-expanded')) === 'true') await chatHeader.click();
      const turnRow = part.locator('.monaco-list-row', { hasText: REVIEW_PROMPT });
      await turnRow.filter({ hasText: '2 files · 1 pending · 1 kept · 1 undone' }).waitFor();
      const hunkRow = part.locator('.monaco-list-row', { hasText: 'add(-1, 1)' });
      await hunkRow.filter({ hasText: 'pending' }).hover();
      await hunkRow.locator('.action-label[aria-label^="Undo Change"]').click();
      await turnRow.filter({ hasText: '2 files · 1 kept · 2 undone' }).waitFor();
      assert.equal(await fileReads(tests, testsBefore), testsBefore, 'undone on disk');
      await part.locator('.monaco-list-row', { hasText: 'ops.py' }).filter({ hasText: '1 kept · 1 undone' }).first().waitFor();
      await hunkRow.filter({ hasText: 'undone' }).waitFor();
      await shot('23-changes-view-counts');
    });
    passed = true;
  });
});

/** The file's text once it reads `expected` (a pattern or the whole text); fails after 10 s
 * with what it reads. */
async function fileReads(file: string, expected: RegExp | string): Promise<string> {
  let text = '';
  for (let i = 0; i < 100; i++, await sleep(100)) {
    text = fs.readFileSync(file, 'utf8');
    if (typeof expected === 'string' ? text === expected : expected.test(text)) return text;
  }
  throw new Error(`${file} never read ${String(expected)}; it reads:\n${text}`);
}

/** Open a workspace file from Quick Open: the file itself, not an editor of it seen before
 * (a diff, or the review's "before" side, which Quick Open lists by the same name). */
async function openFile(page: Page, relative: string): Promise<void> {
  await page.keyboard.press('Control+P');
  await page.waitForSelector('.quick-input-widget', { state: 'visible' });
  await page.keyboard.type(relative);
  const name = path.basename(relative);
  const row = page.locator('.quick-input-list .monaco-list-row').filter({ has: page.locator('.label-name', { hasText: new RegExp(`^${name.replace('.', '\\.')}$`) }) }).first();
  await row.click();
  await page.locator('.tabs-container .tab.active', { hasText: new RegExp(`^${name.replace('.', '\\.')}`) }).waitFor();
}

/** VS Code's own figures for extensions' activation ("Developer: Show Running Extensions":
 * code loading + the activate() call), as it shows them, e.g. "Activation: 3ms". */
async function activationTimes(page: Page, names: string[]): Promise<Record<string, string>> {
  await runCommand(page, 'Developer: Show Running Extensions');
  const times: Record<string, string> = {};
  for (const name of names) {
    const row = page.locator('.runtime-extensions-editor .monaco-list-row', { hasText: name }).first();
    await row.waitFor();
    const time = (await row.locator('.activation-time').innerText().catch(() => '')) || (await row.innerText());
    times[name] = time.replace(/\s+/g, ' ').trim();
  }
  await page.keyboard.press('Control+W');
  return times;
}
