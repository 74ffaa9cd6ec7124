/**
 * The console's only stylesheet and script, served from /assets/ (the content
 * security policy allows nothing inline). No build step: the pages work without
 * the script; it adds the live log and the copy button.
 */
export const CONSOLE_CSS = `:root { color-scheme: light; --ink: #1b1f24; --muted: #4a5460; --line: #c9d1d9; --accent: #0b57d0; --bad: #a40e26; --good: #0a5c2b; }
* { box-sizing: border-box; }
body { margin: 0; font: 16px/1.5 system-ui, sans-serif; color: var(--ink); background: #fff; }
.top { display: flex; flex-wrap: wrap; gap: .75rem 1.5rem; align-items: center; padding: .75rem 1rem; border-bottom: 1px solid var(--line); }
.brand { font-weight: 700; text-decoration: none; color: var(--ink); }
.top nav a { margin-right: 1rem; }
.who { color: var(--muted); margin-right: .5rem; }
main { padding: 1rem; max-width: 72rem; }
a { color: var(--accent); }
a:focus, button:focus, input:focus, select:focus { outline: 3px solid #f2a900; outline-offset: 2px; }
.tabs { display: flex; flex-wrap: wrap; gap: .25rem 1rem; border-bottom: 1px solid var(--line); margin-bottom: 1rem; padding-bottom: .5rem; }
.tabs a[aria-current="page"] { font-weight: 700; color: var(--ink); text-decoration: none; }
table { border-collapse: collapse; width: 100%; display: block; overflow-x: auto; }
caption { text-align: left; font-weight: 600; padding: .25rem 0; }
th, td { text-align: left; padding: .4rem .6rem; border-bottom: 1px solid var(--line); vertical-align: top; }
code { font-family: ui-monospace, monospace; font-size: .95em; overflow-wrap: anywhere; }
code.name { overflow-wrap: normal; }
.hint { color: var(--muted); }
.stack { display: grid; gap: .35rem; max-width: 28rem; }
.stack button { justify-self: start; margin-top: .5rem; }
.row { display: flex; flex-wrap: wrap; gap: .5rem; align-items: center; }
.inline { display: inline; }
input, select, button { font: inherit; padding: .35rem .6rem; }
button, .button { background: var(--accent); color: #fff; border: 0; border-radius: 4px; cursor: pointer; text-decoration: none; display: inline-block; padding: .4rem .8rem; }
button[disabled] { background: #6b7785; cursor: not-allowed; }
.error { color: var(--bad); border-left: 4px solid var(--bad); padding: .25rem .75rem; }
.notice { color: var(--good); border-left: 4px solid var(--good); padding: .25rem .75rem; }
.facts { display: grid; grid-template-columns: minmax(8rem, max-content) 1fr; gap: .4rem 1rem; }
.facts dt { font-weight: 600; }
.facts dd { margin: 0; }
.log { background: #0d1117; color: #e6edf3; padding: .75rem; max-height: 70vh; overflow: auto; white-space: pre-wrap; overflow-wrap: anywhere; font-size: .875rem; }
fieldset { border: 1px solid var(--line); }
.toggle { display: block; }
.visually-hidden { position: absolute; width: 1px; height: 1px; overflow: hidden; clip: rect(0 0 0 0); white-space: nowrap; }
@media (max-width: 40rem) { .facts { grid-template-columns: 1fr; } main { padding: .75rem; } }
`;

export const CONSOLE_JS = `'use strict';
document.addEventListener('DOMContentLoaded', function () {
  var log = document.getElementById('log');
  var empty = document.getElementById('log-empty');
  if (log && window.EventSource && log.dataset.events) {
    var source = new EventSource(log.dataset.events);
    // The stream starts with the last lines the page already shows.
    source.onopen = function () { log.textContent = ''; };
    source.onmessage = function (event) {
      // The first line replaces the page's "No lines yet".
      if (log.hidden) { log.hidden = false; if (empty) empty.hidden = true; }
      var atEnd = log.scrollTop + log.clientHeight >= log.scrollHeight - 8;
      log.appendChild(document.createTextNode(event.data + '\\n'));
      if (atEnd) log.scrollTop = log.scrollHeight;
    };
  }
  document.querySelectorAll('button.copy').forEach(function (button) {
    button.addEventListener('click', function () {
      var text = document.getElementById(button.dataset.copy).textContent;
      if (navigator.clipboard) navigator.clipboard.writeText(text).then(function () { button.textContent = 'Copied'; });
    });
  });
});
`;
