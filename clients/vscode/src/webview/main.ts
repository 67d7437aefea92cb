/**
 * The chat webview's entry point: builds the page, applies the host's actions to its copy
 * of the state with the shared reducer, and re-renders at most once per animation frame
 * (agent text streams in many small chunks).
 */
import { ChatState, emptyState, reduce } from '../core/chatState';
import { ConnectionView, ToWebview } from '../core/messages';
import { Composer } from './composer';
import { h, icon } from './dom';
import { Header, renderBanner, renderMeter, renderPlan, renderQueue, renderSetup, renderTasks } from './panels';
import { Transcript } from './transcript';
import { send } from './vscodeApi';

let state: ChatState = emptyState();
let connection: ConnectionView = { status: 'starting', setup: null, model: null, multiRoot: false };
/** Send was pressed while Tether could not take the prompt: the card says the text is kept. */
let promptKept = false;

const header = new Header();
const banner = h('div', { class: 'banner', role: 'status', hidden: true });
const setup = h('section', { class: 'setup', role: 'region', 'aria-label': 'Set up Tether', hidden: true });
const plan = h('section', { class: 'plan', 'aria-label': 'Todo list', hidden: true });
const tasks = h('section', { class: 'tasks', 'aria-label': 'Background tasks', hidden: true });
const log = h('main', { class: 'log', role: 'log', 'aria-live': 'polite', 'aria-label': 'Conversation', tabindex: '0' });
const queue = h('div', { class: 'queue', 'aria-label': 'Queued messages', hidden: true });
const meter = h('div', { class: 'meter', role: 'meter', 'aria-label': 'Context window used', 'aria-valuemin': '0', 'aria-valuemax': '100' });
const composer = new Composer(() => {
  promptKept = true;
  schedule();
  // Bring the card that says what to do into view, and move focus to its first button.
  setup.scrollIntoView({ block: 'nearest' });
  requestAnimationFrame(() => setup.querySelector<HTMLButtonElement>('button')?.focus());
});
const transcript = new Transcript(log);

document.getElementById('app')!.replaceWith(
  h('div', { id: 'app' }, header.el, banner, setup, plan, tasks, h('div', { class: 'log-wrap' }, log, transcript.chip), h('footer', {}, queue, meter, composer.el)),
);

let scheduled = false;
function schedule(): void {
  if (scheduled) return;
  scheduled = true;
  requestAnimationFrame(() => {
    scheduled = false;
    const ready = connection.status === 'ready' && connection.setup === null;
    if (ready) promptKept = false;
    header.render(state, connection);
    renderBanner(banner, connection);
    renderSetup(setup, connection.setup, promptKept);
    renderPlan(plan, state);
    renderTasks(tasks, state);
    transcript.render(state);
    renderQueue(queue, state);
    renderMeter(meter, state);
    composer.setBusy(state.busy);
    // While the daemon starts, a prompt is taken: the host sends it once the start is done
    // (or puts it back in the box, with the card that says why).
    composer.setReady(ready || (connection.status === 'starting' && connection.setup === null));
    document.body.classList.toggle('busy', state.busy);
    // Screen readers announce the streamed answer once the turn settles, not every chunk.
    log.setAttribute('aria-busy', String(state.busy));
  });
}

window.addEventListener('message', (event: MessageEvent<ToWebview>) => {
  const message = event.data;
  switch (message.type) {
    case 'action':
      if (message.action.type === 'reset') transcript.reset();
      state = reduce(state, message.action);
      break;
    case 'connection':
      connection = message.connection;
      break;
    case 'restorePrompt':
      composer.restore(message.text, message.attachments);
      promptKept = true;
      break;
    case 'fileResults':
      composer.showSuggestions(message.requestId, message.items.map((i) => i.path));
      return;
    case 'attach':
      composer.attach(message.attachment);
      return;
    case 'focusPrompt':
      composer.focus();
      return;
    case 'revealCard':
      // After the next render: the card may have arrived with this very message batch.
      requestAnimationFrame(() => requestAnimationFrame(() => transcript.reveal(message.toolCallId)));
      return;
  }
  schedule();
});

// Links, diff and copy buttons inside rendered items, by delegation (items are rebuilt often).
log.addEventListener('click', (event) => {
  const target = event.target as HTMLElement;
  const copy = target.closest<HTMLButtonElement>('button[data-copy]');
  if (copy) {
    const text = copy.closest('.code-block')?.querySelector('pre code, pre')?.textContent ?? '';
    // The webview may write the clipboard itself (the click allows it); else VS Code does.
    navigator.clipboard.writeText(text).catch(() => send({ type: 'copy', text }));
    copy.replaceChildren(icon('check'), ' Copied');
    copy.classList.add('copied');
    setTimeout(() => {
      copy.replaceChildren(icon('copy'), ' Copy');
      copy.classList.remove('copied');
    }, 1500);
    return;
  }
  const diff = target.closest<HTMLElement>('[data-tool]');
  if (diff) {
    send({ type: 'openDiff', toolCallId: diff.dataset.tool!, uri: diff.dataset.uri! });
    return;
  }
  const link = target.closest<HTMLAnchorElement>('a[data-link]');
  if (link && link.href.startsWith('file:')) {
    event.preventDefault();
    const [uri, line] = link.href.split('#L');
    send({ type: 'openFile', uri, line: line ? Number(line) - 1 : undefined });
  }
});

schedule();
// The host asks in a modal only while the user is not in the chat: it needs to know.
window.addEventListener('focus', () => send({ type: 'focus', focused: true }));
window.addEventListener('blur', () => send({ type: 'focus', focused: false }));
send({ type: 'ready' });
if (document.hasFocus()) send({ type: 'focus', focused: true });
