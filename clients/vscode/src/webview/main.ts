/**
 * The chat webview's entry point: builds the page, applies the host's actions to its copy
 * of the state with the shared reducer, and re-renders at most once per animation frame
 * (agent text streams in many small chunks).
 */
import { ChatState, emptyState, reduce } from '../core/chatState';
import { ConnectionStatus, ToWebview } from '../core/messages';
import { Composer } from './composer';
import { h } from './dom';
import { Header, renderBanner, renderMeter, renderPlan, renderTasks } from './panels';
import { Transcript } from './transcript';
import { send } from './vscodeApi';

let state: ChatState = emptyState();
let connection: { status: ConnectionStatus; message?: string } = { status: 'starting' };

const header = new Header();
const banner = h('div', { class: 'banner', role: 'status', hidden: true });
const plan = h('section', { class: 'plan', 'aria-label': 'Plan', hidden: true });
const tasks = h('section', { class: 'tasks', 'aria-label': 'Background tasks', hidden: true });
const log = h('main', { class: 'log', role: 'log', 'aria-live': 'polite', 'aria-label': 'Conversation', tabindex: '0' });
const meter = h('div', { class: 'meter', role: 'meter', 'aria-label': 'Context window used', 'aria-valuemin': '0', 'aria-valuemax': '100' });
const composer = new Composer();
const transcript = new Transcript(log);

document.getElementById('app')!.replaceWith(
  h('div', { id: 'app' }, header.el, banner, plan, tasks, log, h('footer', {}, meter, composer.el)),
);

let scheduled = false;
function schedule(): void {
  if (scheduled) return;
  scheduled = true;
  requestAnimationFrame(() => {
    scheduled = false;
    header.render(state);
    renderBanner(banner, connection.status, connection.message);
    renderPlan(plan, state);
    renderTasks(tasks, state);
    transcript.render(state);
    renderMeter(meter, state);
    composer.setBusy(state.busy);
    document.body.classList.toggle('busy', state.busy);
    // Screen readers announce the streamed answer once the turn settles, not every chunk.
    log.setAttribute('aria-busy', String(state.busy));
  });
}

window.addEventListener('message', (event: MessageEvent<ToWebview>) => {
  const message = event.data;
  switch (message.type) {
    case 'action':
      state = reduce(state, message.action);
      break;
    case 'connection':
      connection = { status: message.status, message: message.message };
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
  }
  schedule();
});

// Links and diff buttons inside rendered items, by delegation (items are rebuilt often).
log.addEventListener('click', (event) => {
  const target = event.target as HTMLElement;
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
send({ type: 'ready' });
