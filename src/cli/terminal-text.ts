/**
 * The last guard before text reaches a terminal: whatever runplan prints may
 * quote an application's files and variables (a start command, a JAVA_HOME, an
 * --type or a directory name), and a raw ESC, NUL or C1 control in them would be
 * obeyed by the terminal (clear the screen, retitle the window, hide lines).
 * Such characters are written as visible escapes (`\u001b`); tabs and line
 * breaks stay. In `--json` output C0 controls are already escaped by
 * JSON.stringify and C1 controls only occur inside strings, where `\u009b` is
 * the same character, so the JSON stays valid and means the same.
 */
const TERMINAL_CONTROLS = /[\u0000-\u0008\u000b-\u001f\u007f-\u009f]/g;

export function terminalSafe(text: string): string {
  return text.replace(TERMINAL_CONTROLS, (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, '0')}`);
}
