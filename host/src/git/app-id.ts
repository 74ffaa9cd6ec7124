/** An application id as the host makes them: `app_` and a lower-case UUID. The only names a repository (and a push) may have. */
export const APP_ID_SYNTAX = 'app_[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}';
const APP_ID_PATTERN = new RegExp(`^${APP_ID_SYNTAX}$`);

export function isAppId(text: string): boolean {
  return APP_ID_PATTERN.test(text);
}

/** A key id as the store makes them: `key_` and 12 hex digits (it goes into a shell command line and authorized_keys). */
const KEY_ID_PATTERN = /^key_[0-9a-f]{12}$/;

export function isKeyId(text: string): boolean {
  return KEY_ID_PATTERN.test(text);
}
