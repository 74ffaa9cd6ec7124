import { chmod, writeFile } from 'node:fs/promises';

/** A file of the archive or the restored host that holds secrets: 0600 whatever the umask. */
export async function writeSecretFile(file: string, text: string | Buffer): Promise<void> {
  await writeFile(file, text, { mode: 0o600 });
  await chmod(file, 0o600);
}
