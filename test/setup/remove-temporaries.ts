// Loaded before every test file (vitest setupFiles): its afterAll is registered
// first, so it runs after the file's own hooks have stopped what ran in the
// temporaries.
import { afterAll } from 'vitest';
import { removeRecorded } from '../helpers/temp.js';

afterAll(removeRecorded);
