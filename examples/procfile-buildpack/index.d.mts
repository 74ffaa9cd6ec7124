import type { Buildpack, ErrorType } from 'runplan/buildpack';

export declare const ProcfileErrors: { readonly FILE_INVALID: ErrorType };
export declare function parseProcfile(text: string): Array<{ name: string; command: string }>;
declare const procfileBuildpack: Buildpack;
export default procfileBuildpack;
