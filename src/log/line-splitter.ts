import { StringDecoder } from 'node:string_decoder';

/**
 * Output of code runplan does not control (build steps, hooks, processes) cut
 * into lines, with bounds: a line longer than `maxLineBytes` keeps its first
 * bytes and says how many more it had; a stream (or several sharing one
 * OutputBudget, a step's stdout and stderr) shows at most `budget.maxBytes`
 * bytes, then counts the rest and says so once. Linear in the bytes read:
 * each byte is looked at once, whatever the length of its line, so a step that
 * prints one 64 MB line cannot hold the event loop (and its own timeout) for
 * seconds.
 */

/** Default longest line shown: 64 KiB (a minified bundle or a JSON dump on one line is cut there). */
export const MAX_LINE_BYTES = 64 * 1024;

/** Bytes a group of streams may show; what comes after is only counted. */
export class OutputBudget {
  private shownBytes = 0;
  private hiddenBytes = 0;
  private told = false;

  constructor(
    readonly maxBytes: number,
    /** Called once, when the budget runs out (with the limit), and again by `summary()`. */
    private readonly onExhausted: (maxBytes: number) => void = () => undefined,
  ) {}

  /** How many of `bytes` may still be shown; the rest is counted as hidden. */
  take(bytes: number): number {
    const allowed = Math.max(0, Math.min(bytes, this.maxBytes - this.shownBytes));
    this.shownBytes += allowed;
    if (allowed < bytes) {
      this.hiddenBytes += bytes - allowed;
      if (!this.told) {
        this.told = true;
        this.onExhausted(this.maxBytes);
      }
    }
    return allowed;
  }

  get exhausted(): boolean {
    return this.shownBytes >= this.maxBytes;
  }

  /** Bytes not shown because the budget ran out. */
  get hidden(): number {
    return this.hiddenBytes;
  }
}

export interface LineSplitterOptions {
  /** Longest line shown, in bytes (default MAX_LINE_BYTES); the rest of a line is counted. */
  readonly maxLineBytes?: number;
  /** Bytes this stream may show, shared with other streams of the same step. Default: unbounded. */
  readonly budget?: OutputBudget;
}

/** Splits a stream of chunks into lines; a partial line is kept until completed or flushed. */
export class LineSplitter {
  // The current line's parts, up to maxLineBytes in all; beyond that only counted.
  private parts: string[] = [];
  private keptBytes = 0;
  private cutBytes = 0;
  // A multi-byte character split across chunks must not become two broken ones.
  private readonly decoder = new StringDecoder('utf8');
  private readonly maxLineBytes: number;
  private readonly budget: OutputBudget | undefined;

  constructor(
    private readonly onLine: (line: string) => void,
    options: LineSplitterOptions = {},
  ) {
    this.maxLineBytes = options.maxLineBytes ?? MAX_LINE_BYTES;
    this.budget = options.budget;
  }

  push(chunk: string | Uint8Array): void {
    let text: string;
    if (this.budget) {
      // Past the budget nothing is decoded nor split: the bytes are only counted.
      const bytes = typeof chunk === 'string' ? Buffer.from(chunk) : Buffer.from(chunk.buffer, chunk.byteOffset, chunk.byteLength);
      const allowed = this.budget.take(bytes.length);
      if (allowed === 0) return;
      text = this.decoder.write(bytes.subarray(0, allowed));
    } else {
      text = typeof chunk === 'string' ? chunk : this.decoder.write(Buffer.from(chunk.buffer, chunk.byteOffset, chunk.byteLength));
    }
    // A UTF-16 unit is at most 3 bytes of UTF-8: a line this short is under the bound without counting.
    const surelyShort = Math.floor(this.maxLineBytes / 3);
    let start = 0;
    for (;;) {
      const nl = text.indexOf('\n', start);
      if (nl < 0) break;
      if (this.parts.length === 0 && this.cutBytes === 0 && nl - start <= surelyShort) {
        // The common case, a whole short line inside the chunk.
        this.onLine(withoutCr(text.slice(start, nl)));
      } else {
        this.append(text.slice(start, nl));
        this.emit();
      }
      start = nl + 1;
    }
    if (start < text.length) this.append(text.slice(start));
  }

  /** Emits the last, unterminated line. */
  flush(): void {
    const rest = this.decoder.end();
    if (rest !== '') this.append(rest);
    if (this.parts.length > 0 || this.cutBytes > 0) this.emit();
  }

  private append(part: string): void {
    if (this.keptBytes >= this.maxLineBytes) {
      this.cutBytes += Buffer.byteLength(part);
      return;
    }
    const room = this.maxLineBytes - this.keptBytes;
    // Counted only when it might not fit (a UTF-16 unit is at most 3 bytes).
    const bytes = part.length * 3 <= room ? -1 : Buffer.byteLength(part);
    if (bytes <= room) {
      this.parts.push(part);
      this.keptBytes += bytes < 0 ? Buffer.byteLength(part) : bytes;
      return;
    }
    // Cut at the bound, never inside a character: its bytes count as cut too.
    const encoded = Buffer.from(part);
    const kept = utf8Boundary(encoded.subarray(0, room));
    this.parts.push(encoded.toString('utf8', 0, kept));
    this.cutBytes += encoded.length - kept;
    // Nothing more fits: later parts are only counted.
    this.keptBytes = this.maxLineBytes;
  }

  private emit(): void {
    const text = this.parts.join('');
    const cut = this.cutBytes;
    this.parts = [];
    this.keptBytes = 0;
    this.cutBytes = 0;
    this.onLine(cut > 0 ? `${text}… (${cut} more bytes)` : withoutCr(text));
  }
}

function withoutCr(line: string): string {
  return line.endsWith('\r') ? line.slice(0, -1) : line;
}

/** The length of the longest prefix of `bytes` that does not end inside a UTF-8 character. */
function utf8Boundary(bytes: Buffer): number {
  let i = bytes.length;
  // Back over continuation bytes (10xxxxxx) to the lead byte of the last character.
  let back = 0;
  while (i > 0 && back < 4 && ((bytes[i - 1] as number) & 0xc0) === 0x80) {
    i--;
    back++;
  }
  if (i === 0) return bytes.length;
  const lead = bytes[i - 1] as number;
  // Stray continuation bytes after an ASCII one: not a character to keep whole.
  if (lead < 0xc0) return bytes.length;
  const length = lead >= 0xf0 ? 4 : lead >= 0xe0 ? 3 : lead >= 0xc0 ? 2 : 1;
  return length === back + 1 ? bytes.length : i - 1;
}
