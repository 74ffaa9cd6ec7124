import { z } from 'zod';

/**
 * Zod without its compiled fast path, for the CLI: a command parses each schema a
 * few times and exits, so generating and compiling a validator per object schema
 * (new Function) costs more than it saves. Imported first by the CLI's main module,
 * because an object schema reads this setting when it is made; the SDK keeps
 * Zod's default, which pays off in a host planning many applications.
 */
z.config({ jitless: true });
