/** Driving the VS Code workbench in Chromium: the few selectors the end-to-end test needs. */
import { Browser, FrameLocator, Page, chromium } from 'playwright-core';

export async function launchBrowser(executablePath: string, env: Record<string, string>): Promise<{ browser: Browser; page: Page }> {
  const browser = await chromium.launch({
    executablePath,
    env: { ...process.env, ...env },
    args: ['--no-sandbox', '--disable-gpu', '--disable-dev-shm-usage', '--disable-background-networking', '--disable-component-update', '--disable-sync', '--no-first-run', '--disable-quic'],
  });
  const page = await browser.newPage({ viewport: { width: 1400, height: 900 } });
  page.setDefaultTimeout(30_000);
  return { browser, page };
}

export async function runCommand(page: Page, title: string): Promise<void> {
  await page.keyboard.press('F1');
  await page.waitForSelector('.quick-input-widget', { state: 'visible' });
  await page.keyboard.type(title);
  await page.waitForSelector(`.quick-input-list .monaco-list-row:has-text("${title}")`);
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
  return page.frameLocator('iframe.webview.ready').frameLocator('#active-frame');
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
