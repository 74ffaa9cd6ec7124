/**
 * git's pkt-line framing (gitprotocol-common(5)), which receive-pack and the
 * proc-receive hook speak over the hook's standard input and output: each
 * packet is its length in 4 hex digits (the 4 included) and its bytes; `0000`
 * (a flush packet) ends a section.
 */

const FLUSH = '0000';
/** git's LARGE_PACKET_MAX: the longest packet, header included. */
const MAX_PACKET = 65520;

/** One packet of `text` (git sends it without the trailing LF; the hook's answers end with one, as githooks(5) shows them). */
export function pktLine(text: string): Buffer {
  const body = Buffer.from(`${text}\n`);
  if (body.length + 4 > MAX_PACKET) throw new Error(`pkt-line: a packet of ${body.length} bytes is longer than git reads`);
  return Buffer.concat([Buffer.from((body.length + 4).toString(16).padStart(4, '0')), body]);
}

export const FLUSH_PACKET = Buffer.from(FLUSH);

/** Reads packets as they come: `section()` resolves with the packets before the next flush. */
export class PktLineReader {
  private buffer = Buffer.alloc(0);
  private ended = false;
  private wake: (() => void) | undefined;

  constructor(input: NodeJS.ReadableStream) {
    input.on('data', (chunk: Buffer | string) => {
      this.buffer = Buffer.concat([this.buffer, typeof chunk === 'string' ? Buffer.from(chunk) : chunk]);
      this.wake?.();
    });
    input.once('end', () => {
      this.ended = true;
      this.wake?.();
    });
  }

  /** The next packet's text without its trailing LF, or null for a flush packet. */
  private async next(): Promise<string | null> {
    for (;;) {
      if (this.buffer.length >= 4) {
        const header = this.buffer.subarray(0, 4).toString('latin1');
        if (!/^[0-9a-f]{4}$/.test(header)) throw new Error(`pkt-line: ${JSON.stringify(header)} is not a packet length`);
        const length = Number.parseInt(header, 16);
        // 0000 flush; 0001 and 0002 (delimiter, response end) do not occur in this exchange and end a section all the same.
        if (length < 4) {
          this.buffer = this.buffer.subarray(4);
          return null;
        }
        if (this.buffer.length >= length) {
          const text = this.buffer.subarray(4, length).toString('utf8');
          this.buffer = this.buffer.subarray(length);
          return text.endsWith('\n') ? text.slice(0, -1) : text;
        }
      }
      if (this.ended) throw new Error('pkt-line: the input ended inside a section');
      await new Promise<void>((resolve) => {
        this.wake = resolve;
      });
      this.wake = undefined;
    }
  }

  async section(): Promise<string[]> {
    const packets: string[] = [];
    for (let packet = await this.next(); packet !== null; packet = await this.next()) packets.push(packet);
    return packets;
  }
}
