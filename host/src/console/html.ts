/** Text that is already HTML: made only by `html` (or `raw` for constant markup). */
export class Html {
  constructor(readonly text: string) {}
  toString(): string {
    return this.text;
  }
}

const ESCAPES: Record<string, string> = { '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' };

function escapeHtml(value: string): string {
  return value.replace(/[&<>"']/g, (c) => ESCAPES[c] as string);
}

type Part = Html | string | number | boolean | null | undefined | readonly Part[];

function render(part: Part): string {
  if (part === null || part === undefined || part === false) return '';
  if (part instanceof Html) return part.text;
  if (Array.isArray(part)) return part.map(render).join('');
  return escapeHtml(String(part));
}

/**
 * HTML from a template: every value is escaped unless it is Html itself, so a
 * page cannot print an application's name, a variable or a log line as markup.
 */
export function html(strings: TemplateStringsArray, ...values: Part[]): Html {
  let text = strings[0] as string;
  for (let i = 0; i < values.length; i++) text += render(values[i] as Part) + (strings[i + 1] as string);
  return new Html(text);
}
