/** A lower-case UUID, as in an application id. */
export const UUID_SYNTAX = '[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}';
/** An application id as the host makes them: `app_` and a lower-case UUID. The only names a repository (and a push) may have. */
const APP_ID_SYNTAX = `app_${UUID_SYNTAX}`;
const APP_ID_PATTERN = new RegExp(`^${APP_ID_SYNTAX}$`);

export function isAppId(text: string): boolean {
  return APP_ID_PATTERN.test(text);
}

/** A key id as the store makes them: `key_` and 12 hex digits (it goes into a shell command line and authorized_keys). */
const KEY_ID_PATTERN = /^key_[0-9a-f]{12}$/;

export function isKeyId(text: string): boolean {
  return KEY_ID_PATTERN.test(text);
}

/**
 * The DNS label of an application's default host name: `app-` and its UUID. The id's `_` is no letter of an
 * RFC 1123 host name (public CAs refuse such names, frameworks reject such a Host): the id keeps it, the name does not.
 */
export function appLabel(appId: string): string {
  return `app-${appId.slice('app_'.length)}`;
}
