import { z } from 'zod';

const Integrity = z.string().regex(/^sha(256|384|512)-[A-Za-z0-9+/=]+$/);

/** One version the registry publishes, with its tarball's integrity: what the inventory lists and what an install fetches. */
export const Published = z.object({ version: z.string(), integrity: Integrity });
export type PublishedVersion = z.infer<typeof Published>;
