import { readFile } from 'node:fs/promises';
import { createServer, type Server } from 'node:http';
import { basename } from 'node:path';
import { inject } from 'vitest';
import { PLAY1_SERIES } from '../../buildpacks/play1/versions.js';

type ArchiveKind = 'zip' | 'tar.gz';

export interface StandInBuild {
  readonly dir: string;
  /** The stand-in's classes (also inside every distribution). */
  readonly jar: string;
  readonly archives: Readonly<Record<string, Readonly<Record<ArchiveKind, { readonly file: string; readonly sha256: string }>>>>;
}

/**
 * The stand-in Play distributions of every release the buildpack knows (NOT
 * Play: see test/stand-in/play1/README.md), built once and kept in the run's
 * shared cache for as long as the stand-in's sources stay the same.
 */
export async function standInDistributions(): Promise<StandInBuild> {
  // @ts-expect-error: plain ES module without type declarations
  const { buildStandIn } = await import('../stand-in/play1/build-stand-in.mjs');
  return buildStandIn({ cacheDir: inject('sharedCacheDir'), releases: PLAY1_SERIES.map((s) => s.release) }) as Promise<StandInBuild>;
}

export interface Play1Mirror {
  /** http://127.0.0.1:<port> */
  readonly base: string;
  /** URL template for RUNPLAN_PLAY1_MIRROR; `route` "corrupt" serves every archive with one byte changed. */
  template(kind?: ArchiveKind, route?: 'play' | 'corrupt'): string;
  /** RUNPLAN_PLAY1_CHECKSUMS for the genuine archives. */
  checksums(kind?: ArchiveKind): string;
  /** The host-level environment that points runplan at this mirror. */
  hostEnv(kind?: ArchiveKind, route?: 'play' | 'corrupt'): Record<string, string>;
  /** Paths requested so far. */
  readonly requests: string[];
  close(): Promise<void>;
}

/** A local mirror on 127.0.0.1 (free port) serving the stand-in distributions; stop it with close(). */
export async function startPlay1Mirror(build: StandInBuild): Promise<Play1Mirror> {
  const files = new Map<string, string>();
  for (const byKind of Object.values(build.archives)) for (const { file } of Object.values(byKind)) files.set(basename(file), file);
  const requests: string[] = [];
  const server: Server = createServer((req, res) => {
    const url = new URL(req.url ?? '/', 'http://mirror');
    requests.push(url.pathname);
    const [, route, name] = url.pathname.split('/');
    const file = name === undefined ? undefined : files.get(name);
    if (!file || (route !== 'play' && route !== 'corrupt')) {
      res.writeHead(404).end('not on this mirror');
      return;
    }
    readFile(file).then(
      (bytes) => {
        const middle = Math.floor(bytes.length / 2);
        if (route === 'corrupt') bytes.writeUInt8(bytes.readUInt8(middle) ^ 0xff, middle);
        res.writeHead(200, { 'content-type': 'application/octet-stream', 'content-length': bytes.length }).end(bytes);
      },
      () => res.writeHead(500).end(),
    );
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const base = `http://127.0.0.1:${(server.address() as { port: number }).port}`;
  const template = (kind: ArchiveKind = 'zip', route: 'play' | 'corrupt' = 'play') => `${base}/${route}/play-{version}.${kind}`;
  const checksums = (kind: ArchiveKind = 'zip') =>
    Object.entries(build.archives)
      .map(([release, a]) => `${release}=${a[kind].sha256}`)
      .join(',');
  return {
    base,
    template,
    checksums,
    hostEnv: (kind = 'zip', route = 'play') => ({ RUNPLAN_PLAY1_MIRROR: template(kind, route), RUNPLAN_PLAY1_CHECKSUMS: checksums(kind) }),
    requests,
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}
