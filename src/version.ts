/** The runplan version written into every plan (kept equal to package.json by a test). */
export const RUNPLAN_VERSION = '0.1.0';
