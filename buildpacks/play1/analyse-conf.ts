import { decide, type Decision, lineExcerpt, type OverriddenSource, type PlanWarning } from '../../src/kit/index.js';
import { APPLICATION_CONF, classifyReferences, type ApplicationConf, type Reference } from './application-conf.js';
import { Play1Warnings } from './warnings.js';

export interface ConfAnalysis {
  /** Which keys apply on the service's framework id, and where each reference comes from. */
  readonly decision: Decision;
  readonly references: readonly Reference[];
  readonly warnings: readonly PlanWarning[];
}

/**
 * What Play 1.x will make of conf/application.conf under the service's framework
 * id, explained for the plan. Play resolves the file itself at run time; this
 * reading only explains it and warns early. Values are never copied into the
 * plan (they may hold credentials): keys, lines and references are.
 */
export function analyseConf(conf: ApplicationConf, lookup: (name: string) => string | undefined, holdsDollar: (name: string) => boolean = () => false): ConfAnalysis {
  const { view } = conf;
  const id = view.id;
  const references = classifyReferences(view, lookup);
  const fromId = [...view.applied.values()].filter((e) => e.writtenAs !== e.key);

  const overridden: OverriddenSource[] = [
    ...fromId
      .filter((e) => e.replaces)
      .map((e) => ({ source: `${APPLICATION_CONF} line ${e.replaces?.line}: ${e.key}`, value: null, reason: `replaced by ${e.writtenAs} (line ${e.line}) on framework id ${id}` })),
    ...view.otherIds.map((e) => ({
      source: `${APPLICATION_CONF} line ${e.line}: ${e.key}`,
      value: null,
      reason: `framework id ${/^%([^.]+)/.exec(e.key)?.[1]} is not ${id}, so the entry does not apply`,
    })),
  ];
  const parts = [
    fromId.length === 0
      ? `no %${id}. entry`
      : atMost(
          fromId.map((e) => `${e.writtenAs} (line ${e.line}) ${e.replaces ? `replaces ${e.key} (line ${e.replaces.line})` : 'applies'}`),
          'entries',
        ).join('; '),
    ...atMost(references.map(describeReference), 'references'),
  ];
  const decision = decide({
    id: 'play1.config',
    subject: `application.conf on framework id ${id}`,
    basis: APPLICATION_CONF,
    resolved: `${view.applied.size} key${view.applied.size === 1 ? '' : 's'} apply, ${fromId.length} from %${id}. entries, ${references.length} \${…} reference${references.length === 1 ? '' : 's'}`,
    reason: `Play reads the file itself at run time with framework id ${id}: ${parts.join('; ')}`,
    lost: overridden,
  });

  const undefinedRefs = references.filter((r) => r.status.kind === 'undefined');
  const warnings: PlanWarning[] = undefinedRefs.slice(0, LISTED_AT_MOST).map((r) =>
    Play1Warnings.PLAY1_UNDEFINED_REFERENCE.create({
      message: `${r.writtenAs} (line ${r.line}) refers to \${${lineExcerpt(r.name)}}, which no application, add-on or service variable defines; Play will leave the text \${${lineExcerpt(r.name)}} in ${r.key}.`,
      file: APPLICATION_CONF,
      variable: r.name,
    }),
  );
  if (undefinedRefs.length > LISTED_AT_MOST) {
    // A file with thousands of them would otherwise print one warning each: megabytes.
    warnings.push(
      Play1Warnings.PLAY1_UNDEFINED_REFERENCE.create({
        message: `${undefinedRefs.length - LISTED_AT_MOST} more \${…} references of ${APPLICATION_CONF} (from line ${(undefinedRefs[LISTED_AT_MOST] as Reference).line}) refer to variables nothing defines; Play will leave their text in place.`,
        file: APPLICATION_CONF,
      }),
    );
  }
  warnings.push(...dollarWarnings(references, holdsDollar));
  const xf = xForwardedWarning(conf);
  if (xf) warnings.push(xf);
  const dev = devModeWarning(conf);
  if (dev) warnings.push(dev);
  return { decision, references, warnings };
}

/** How many entries, references or warnings of one kind a plan lists one by one; the rest are counted. */
const LISTED_AT_MOST = 50;

function atMost(items: string[], what: string): string[] {
  return items.length <= LISTED_AT_MOST ? items : [...items.slice(0, LISTED_AT_MOST), `and ${items.length - LISTED_AT_MOST} more ${what}`];
}

function describeReference(r: Reference): string {
  const where = `\${${lineExcerpt(r.name)}} in ${r.writtenAs}`;
  switch (r.status.kind) {
    case 'framework':
      return `${where} is a path Play fills in`;
    case 'variable':
      return `${where} comes from ${r.status.origin}`;
    case 'system-property':
      return `${where} names a JVM system property, known only when the JVM runs`;
    case 'undefined':
      return `${where} is defined nowhere`;
  }
}

/**
 * Play 1.x inserts a variable's value with Matcher.appendReplacement after
 * escaping only backslashes (play.Play#readOneConfigurationFile in every series),
 * so a `$` in the value is read as a group reference: "$x" or a trailing "$"
 * stops the start with IllegalArgumentException ("Illegal group reference"),
 * "${x}" with "No group with name", and "$0"/"$1" insert "${NAME}"/"NAME"
 * instead. The value itself is never shown: it may be a secret.
 */
function dollarWarnings(references: readonly Reference[], holdsDollar: (name: string) => boolean): PlanWarning[] {
  return references
    .filter((r) => r.status.kind === 'variable' && holdsDollar(r.name))
    .map((r) =>
      Play1Warnings.PLAY1_DOLLAR_IN_VALUE.create({
        message: `${r.writtenAs} (line ${r.line}) inserts \${${r.name}}, whose value holds a $: Play 1.x (every series) escapes only backslashes when it substitutes \${…}, so it reads the $ as a regular-expression group reference and stops at start with "Illegal group reference" (or inserts other text for $0 or $1).`,
        file: APPLICATION_CONF,
        variable: r.name,
      }),
    );
}

/** Specification, "Play secure flag": request.secure works only with XForwardedSupport=all. */
function xForwardedWarning({ view }: ApplicationConf): PlanWarning | undefined {
  const setting = view.applied.get('XForwardedSupport');
  if (setting && setting.value.trim().toLowerCase() === 'all') return undefined;
  const message = setting
    ? `${setting.writtenAs}=${lineExcerpt(setting.value.trim())} (line ${setting.line}) trusts only the proxy addresses listed; the service's proxies are not known in advance, so Play refuses their forwarded requests ("This proxy request is not authorized") and request.secure never becomes true.`
    : `XForwardedSupport is not set for framework id ${view.id}: the service terminates HTTPS and forwards plain HTTP with X-Forwarded-Proto, which Play 1.x reads only with XForwardedSupport=all, so request.secure will be false.`;
  return Play1Warnings.PLAY1_XFORWARDED_SUPPORT.create({ message, file: APPLICATION_CONF });
}

/**
 * The precompiled application always runs in PROD mode (Play forces it), but
 * Play's launcher reads application.mode itself and, on `dev`, starts the JVM
 * with a JPDA debugger listening on jpda.port.
 */
function devModeWarning({ view }: ApplicationConf): PlanWarning | undefined {
  const mode = view.applied.get('application.mode');
  if (mode?.value.trim().toLowerCase() !== 'dev') return undefined;
  const port = view.applied.get('jpda.port')?.value.trim() || '8000';
  return Play1Warnings.PLAY1_DEV_MODE.create({
    message: `${mode.writtenAs}=dev (line ${mode.line}) applies on framework id ${view.id}: the precompiled application runs in PROD mode anyway, but Play's launcher starts the JVM with a JPDA debugger listening on port ${port}.`,
    file: APPLICATION_CONF,
  });
}
