import { execFileSync } from 'node:child_process';
import { mkdir, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { readApplicationConf } from '../../buildpacks/play1/application-conf.js';
import { standInDistributions } from '../helpers/play1.js';
import { tempDir } from '../helpers/temp.js';

/**
 * The plan explains application.conf with runplan's own reader; Play reads it
 * with java.util.Properties. Both must agree, so the JVM's reading (through the
 * stand-in's ConfDump, which applies Play's framework-id rule) is the reference.
 */
const TRICKY = [
  // Java keeps a byte-order mark: this first line is the key "\uFEFFbom.key", not a comment.
  '\uFEFFbom.key=with a byte-order mark',
  '# comment',
  '! bang comment',
  '  indented.key = indented value',
  'colon.key:colon value',
  'blank.key blank separated',
  'empty.key=',
  'bare.key',
  'tabs\t=\tvalue with trailing blanks   ',
  'escaped\\=key=value',
  'escaped\\ space=value',
  'continued=first \\',
  '    second \\',
  '\tthird',
  'backslash.end=path\\\\',
  'escapes=tab\\tnewline\\nunicode\\u00e9 other\\q',
  'utf8=café ☕',
  'duplicate=first',
  'duplicate=second',
  'reference=${PG_HOST}/x',
  '%platform.duplicate=  for the id  ',
  '%platform.only.id=yes',
  '%prod.duplicate=other id',
  '%platform-x.look=alike',
  'crlf=one\r',
  'last=no newline at end',
].join('\n');

describe('application.conf parity with java.util.Properties', () => {
  it("reads a tricky file exactly as the JVM does, under the service's framework id", async () => {
    const { jar } = await standInDistributions();
    const app = await tempDir('runplan-conf-parity-');
    await mkdir(join(app, 'conf'));
    await writeFile(join(app, 'conf', 'application.conf'), TRICKY);
    const jvm = JSON.parse(execFileSync('java', ['-cp', jar, 'play.standin.ConfDump', app, 'platform'], { encoding: 'utf8' }));
    const ours = Object.fromEntries([...readApplicationConf(TRICKY).view.applied].map(([key, entry]) => [key, entry.value]));
    expect(ours).toEqual(jvm);
    expect(ours).toMatchObject({ continued: 'first second third', duplicate: 'for the id', 'escaped=key': 'value' });
  });
});
