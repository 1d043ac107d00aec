/**
 * A Server-Sent Events parser (the WHATWG event-stream format): text in, complete messages out. Lines are ended by
 * LF, CRLF or CR; `id:` and `data:` fields are kept (several `data:` lines joined by LF), comments (`:`) and other
 * fields ignored, a message ends at a blank line. A message larger than `maxMessageBytes` is refused rather than
 * buffered without end: the parser then reports `oversize` and keeps nothing.
 */
export interface SseMessage {
  id: string | undefined;
  data: string;
}

export class SseParser {
  #pending = '';
  #id: string | undefined;
  #data: string[] = [];
  #size = 0;

  constructor(private readonly maxMessageBytes = 1 << 20) {}

  /** Feeds text; returns the messages it completed, or `oversize`. */
  push(text: string): SseMessage[] | 'oversize' {
    this.#pending += text;
    const out: SseMessage[] = [];
    for (;;) {
      const end = /\r\n|\r|\n/.exec(this.#pending);
      if (!end) break;
      // A CR at the very end may be the first half of a CRLF: wait for the next chunk.
      if (end[0] === '\r' && end.index === this.#pending.length - 1) break;
      const line = this.#pending.slice(0, end.index);
      this.#pending = this.#pending.slice(end.index + end[0].length);
      const message = this.#line(line);
      if (message) out.push(message);
    }
    this.#size += text.length;
    if (this.#pending.length > this.maxMessageBytes || this.#size > this.maxMessageBytes) return 'oversize';
    return out;
  }

  #line(line: string): SseMessage | undefined {
    if (line === '') {
      const message = this.#data.length > 0 ? { id: this.#id, data: this.#data.join('\n') } : undefined;
      this.#id = undefined;
      this.#data = [];
      this.#size = this.#pending.length;
      return message;
    }
    if (line.startsWith(':')) return undefined;
    const colon = line.indexOf(':');
    const field = colon < 0 ? line : line.slice(0, colon);
    const value = colon < 0 ? '' : line.slice(colon + 1).replace(/^ /, '');
    if (field === 'id') this.#id = value;
    else if (field === 'data') this.#data.push(value);
    return undefined;
  }
}
