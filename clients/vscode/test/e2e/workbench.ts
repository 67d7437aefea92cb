/** Driving the VS Code workbench in Chromium: the few selectors the end-to-end test needs. */
import { Browser, FrameLocator, Locator, Page, chromium } from 'playwright-core';

export async function launchBrowser(executablePath: string, env: Record<string, string>): Promise<{ browser: Browser; page: Page }> {
  const browser = await chromium.launch({
    executablePath,
    env: { ...process.env, ...env },
    args: ['--no-sandbox', '--disable-gpu', '--disable-dev-shm-usage', '--disable-background-networking', '--disable-component-update', '--disable-sync', '--no-first-run', '--disable-quic'],
  });
  // Clipboard access: "Copy" in the chat goes through VS Code to the browser's clipboard.
  const context = await browser.newContext({ viewport: { width: 1400, height: 900 }, permissions: ['clipboard-read', 'clipboard-write'] });
  const page = await context.newPage();
  page.setDefaultTimeout(30_000);
  return { browser, page };
}

/** The side bar part that holds the chat: the secondary one, or (VS Code before 1.106,
 * which has no `secondarySidebar` view container) the Explorer of the primary one. */
export async function chatPart(page: Page): Promise<Locator> {
  // (Webview iframes live in an overlay outside the parts: look for the view's header.)
  const aux = page.locator('.part.auxiliarybar');
  if (await aux.locator('.pane-header', { hasText: 'Chat' }).count()) return aux;
  return page.locator('.part.sidebar');
}

/** Make the chat's side bar `width` px wide by dragging the sash on its editor side. */
export async function setChatWidth(page: Page, width: number): Promise<void> {
  const part = await chatPart(page);
  const box = (await part.boundingBox())!;
  const onRight = box.x > 500;
  const edgeX = onRight ? box.x : box.x + box.width;
  const sashes = await page.locator('.monaco-sash.vertical').evaluateAll((els) =>
    els.map((el) => {
      const r = el.getBoundingClientRect();
      return { x: r.x + r.width / 2, y: r.y + r.height / 2, visible: r.height > 100 };
    }),
  );
  const sash = sashes.filter((s) => s.visible).sort((a, b) => Math.abs(a.x - edgeX) - Math.abs(b.x - edgeX))[0];
  if (!sash || Math.abs(sash.x - edgeX) > 8) throw new Error(`no sash at the chat's edge (x=${edgeX}): ${JSON.stringify(sashes)}`);
  await page.mouse.move(sash.x, sash.y);
  await page.mouse.down();
  const target = onRight ? box.x + box.width - width : box.x + width;
  await page.mouse.move(target, sash.y, { steps: 10 });
  await page.mouse.up();
}

/** Run a command from the palette. Right after start-up the palette may not list the
 * contributions of extensions yet (they register a moment later): then ask again. */
export async function runCommand(page: Page, title: string): Promise<void> {
  for (let attempt = 1; ; attempt++) {
    await page.keyboard.press('F1');
    await page.waitForSelector('.quick-input-widget', { state: 'visible' });
    await page.keyboard.type(title);
    try {
      await page.waitForSelector(`.quick-input-list .monaco-list-row:has-text("${title}")`, { timeout: 10_000 });
      break;
    } catch (error) {
      if (attempt === 3) throw error;
      await page.keyboard.press('Escape');
    }
  }
  await page.keyboard.press('Enter');
}

export async function quickOpen(page: Page, name: string): Promise<void> {
  await page.keyboard.press('Control+P');
  await page.waitForSelector('.quick-input-widget', { state: 'visible' });
  await page.keyboard.type(name);
  await page.waitForSelector(`.quick-input-list .monaco-list-row:has-text("${name}")`);
  await page.keyboard.press('Enter');
}

/** The chat webview's document (VS Code nests it in two iframes). */
export function chatFrame(page: Page): FrameLocator {
  // The chat's iframe (a walkthrough's Markdown is a webview too).
  return page.frameLocator('iframe.webview.ready[src*="purpose=webviewView"]').frameLocator('#active-frame');
}

/** Text of the active editor as the user sees it (Monaco renders spaces as nbsp). */
export async function editorText(page: Page): Promise<string> {
  const text = await page.locator('.editor-group-container.active .monaco-editor .view-lines').first().innerText();
  return text.replace(/\u00a0/g, ' ');
}

export async function waitForEditorText(page: Page, pattern: RegExp, timeoutMs = 30_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  let last = '';
  while (Date.now() < deadline) {
    last = await editorText(page).catch(() => '');
    if (pattern.test(last)) return;
    await page.waitForTimeout(100);
  }
  throw new Error(`editor text never matched ${pattern}; it reads:\n${last}`);
}
