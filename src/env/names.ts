import { CoreErrors } from '../errors/core-errors.js';

// Letters, digits and "_" per the specification. A leading digit is refused too:
// POSIX shells (which run `npm start` scripts and rake tasks) cannot read such a name.
const VALID_NAME = /^[A-Za-z_][A-Za-z0-9_]*$/;

/** Whether `name` may name a variable: ASCII letters, digits and "_", not starting with a digit. */
export function isValidVariableName(name: string): boolean {
  return VALID_NAME.test(name);
}

/** Throws RUNPLAN_E_ENV_INVALID_NAME naming `where` the variable came from. */
export function assertValidVariableName(name: string, where: string): void {
  if (isValidVariableName(name)) return;
  const shown = JSON.stringify(name);
  const why = name === '' ? 'the name is empty' : /^[0-9]/.test(name) ? 'it starts with a digit' : 'it contains characters other than ASCII letters, digits and "_"';
  throw CoreErrors.ENV_INVALID_NAME.create({
    message: `variable name ${shown} from ${where} is not valid: ${why}.`,
    // Escaped: the name is printed on its own line, and may hold control characters.
    variable: shown.slice(1, -1),
  });
}
