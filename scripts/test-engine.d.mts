// Types of test-engine.mjs for the TypeScript tests.
export interface TestEngine {
  /** For DOCKER_HOST. */
  readonly host: string;
  readonly pid: number | undefined;
  stop(): Promise<void>;
}
export function startTestEngine(cacheDir: string): Promise<TestEngine | undefined>;
/** '' when `docker exec` (and so a HEALTHCHECK) runs inside the container, else why it does not. */
export function probeContainerExec(host: string): string;
