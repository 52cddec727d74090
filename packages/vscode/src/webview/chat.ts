import MarkdownIt from 'markdown-it';
import type { FromChatView, ToChatView } from '../common/chat-messages';
import type { ChatMessage } from '../common/protocol';

/**
 * The chat panel's page: the thread's messages rendered as markdown (raw HTML stays text), the
 * reply streamed in token by token from the UI message stream chunks, a model field, send and stop.
 */
declare function acquireVsCodeApi(): { postMessage(message: FromChatView): void };

const vscode = acquireVsCodeApi();
const markdown = new MarkdownIt({ html: false, linkify: true, breaks: false });
const list = document.getElementById('messages')!;
const form = document.getElementById('composer') as HTMLFormElement;
const input = document.getElementById('input') as HTMLTextAreaElement;
const model = document.getElementById('model') as HTMLInputElement;
const send = document.getElementById('send') as HTMLButtonElement;
const stop = document.getElementById('stop') as HTMLButtonElement;
const notice = document.getElementById('notice')!;
const empty = document.getElementById('empty')!;
const modelChoices = document.getElementById('models')!;
/** Runloom's mark (media/runloom.svg), inline so it takes the theme's colour. */
const RUNLOOM_MARK =
  '<svg viewBox="0 0 24 24" fill="none" stroke="currentColor" stroke-width="1.8" stroke-linecap="round" aria-hidden="true"><path d="M4 4v16M20 4v16"/><path d="M4 7c5 0 11 4 16 4M4 12c5 0 11-4 16-4M4 13c5 0 11 4 16 4M4 18c5 0 11-4 16-4"/></svg>';

/** The badge of a reply that did not finish normally (`status` in its metadata). */
const STATUS_LABELS: Record<string, string> = { streaming: '', cancelled: 'stopped', error: 'failed', interrupted: 'interrupted' };

interface Shown {
  message: ChatMessage;
  element: HTMLElement;
}
const shown: Shown[] = [];
let streaming = false;
let replying: Shown | undefined;

function render(entry: Shown): void {
  const { message, element } = entry;
  element.className = `message ${message.role}${message.status ? ` ${message.status}` : ''}`;
  element.dataset.role = message.role;
  if (message.status) element.dataset.status = message.status;
  else delete element.dataset.status;
  const body = element.querySelector('.body')!;
  body.innerHTML = markdown.render(message.text || (message.status === 'streaming' ? '…' : ''));
  element.querySelector('.model')!.textContent = message.model ?? '';
  const badge = element.querySelector('.badge')!;
  badge.textContent = message.status ? (STATUS_LABELS[message.status] ?? message.status) : '';
}

/** Shows a message last, or just before `before` (a user message whose reply already started). */
function append(message: ChatMessage, before?: Shown): Shown {
  const element = document.createElement('article');
  element.innerHTML = '<header><span class="avatar"></span><span class="who"></span><span class="model"></span><span class="badge"></span></header><div class="body"></div>';
  element.querySelector('.who')!.textContent = message.role === 'user' ? 'You' : message.role === 'assistant' ? 'Runloom' : message.role;
  const avatar = element.querySelector('.avatar')!;
  if (message.role === 'assistant') avatar.innerHTML = RUNLOOM_MARK;
  else avatar.textContent = message.role === 'user' ? 'Y' : 'S';
  empty.hidden = true;
  const entry = { message, element };
  if (before) {
    list.insertBefore(element, before.element);
    shown.splice(shown.indexOf(before), 0, entry);
  } else {
    list.appendChild(element);
    shown.push(entry);
  }
  render(entry);
  element.scrollIntoView({ block: 'end' });
  return entry;
}

function setStreaming(value: boolean): void {
  streaming = value;
  send.disabled = value;
  stop.hidden = !value;
  input.disabled = value;
  if (!value) input.focus();
}

/** Set when a chunk batch brings the reply's first text, reported once it is rendered. */
let firstTokenPending = false;

/** Applies UI message stream chunks to the reply being shown. */
function applyChunks(chunks: Record<string, unknown>[], ended: boolean): void {
  for (const chunk of chunks) {
    switch (chunk.type) {
      case 'start':
        replying = append({ id: String(chunk.messageId ?? Date.now()), role: 'assistant', text: '', status: 'streaming', model: modelOf(chunk.messageMetadata) });
        break;
      case 'text-delta':
        if (replying) {
          if (replying.message.text === '') firstTokenPending = true;
          replying.message.text += String(chunk.delta ?? '');
        }
        break;
      case 'error':
        if (replying) replying.message.status = 'error';
        notice.textContent = String(chunk.errorText ?? 'the reply failed');
        break;
      case 'abort':
        if (replying) replying.message.status = 'cancelled';
        break;
      case 'finish':
        if (replying && replying.message.status === 'streaming') replying.message.status = undefined;
        break;
      default:
        break;
    }
  }
  if (replying) {
    if (ended && replying.message.status === 'streaming') replying.message.status = undefined;
    // The first token and the end show at once; the tokens between at most once a frame, so a
    // long reply is not rendered again from its start for every token.
    if (firstTokenPending || ended || replying.message.status !== 'streaming') showReply(replying);
    else if (frameRequested === undefined) frameRequested = requestAnimationFrame(() => replying && showReply(replying));
    if (firstTokenPending) vscode.postMessage({ type: 'first-token' });
    firstTokenPending = false;
  }
  if (ended) {
    replying = undefined;
    setStreaming(false);
  }
}

/** The `provider/model` a reply's metadata names (its `start` chunk carries it). */
function modelOf(metadata: unknown): string | undefined {
  const chosen = (metadata as { model?: { provider?: unknown; model?: unknown } } | undefined)?.model;
  return typeof chosen?.provider === 'string' && typeof chosen.model === 'string' ? `${chosen.provider}/${chosen.model}` : undefined;
}

/** A render of the reply waiting for the next frame. */
let frameRequested: number | undefined;

function showReply(entry: Shown): void {
  if (frameRequested !== undefined) cancelAnimationFrame(frameRequested);
  frameRequested = undefined;
  render(entry);
  entry.element.scrollIntoView({ block: 'end' });
}

window.addEventListener('message', (event: MessageEvent<ToChatView>) => {
  const message = event.data;
  switch (message.type) {
    case 'history':
      document.title = message.title;
      list.replaceChildren(empty);
      shown.length = 0;
      for (const saved of message.messages) append(saved);
      empty.hidden = shown.length > 0;
      replying = [...shown].reverse().find((entry) => entry.message.status === 'streaming');
      if (!model.value) model.value = message.model;
      modelChoices.replaceChildren(
        ...message.models.map((choice) => {
          const option = document.createElement('option');
          option.value = choice;
          return option;
        }),
      );
      setStreaming(message.streaming);
      vscode.postMessage({ type: 'shown' });
      break;
    case 'sent':
      setStreaming(true);
      append(message.message, replying);
      break;
    case 'chunks':
      applyChunks(message.chunks, message.ended);
      break;
    case 'failed':
      notice.textContent = message.message;
      setStreaming(false);
      break;
    case 'render-report':
      if (replying && frameRequested !== undefined) showReply(replying);
      vscode.postMessage({
        type: 'rendered',
        streaming,
        messages: shown.map(({ element }) => ({
          role: element.dataset.role ?? '',
          text: (element.querySelector('.body') as HTMLElement).innerText.trim(),
          status: element.dataset.status,
        })),
      });
      break;
  }
});

form.addEventListener('submit', (event) => {
  event.preventDefault();
  const text = input.value.trim();
  if (!text || streaming) return;
  notice.textContent = '';
  input.value = '';
  setStreaming(true);
  vscode.postMessage({ type: 'send', text, model: model.value.trim() });
});

input.addEventListener('keydown', (event) => {
  if (event.key === 'Enter' && !event.shiftKey) {
    event.preventDefault();
    form.requestSubmit();
  }
});

stop.addEventListener('click', () => vscode.postMessage({ type: 'stop' }));

vscode.postMessage({ type: 'ready' });
