import { createCipheriv, createDecipheriv, pbkdf2Sync, randomBytes } from 'node:crypto';
import { createReadStream } from 'node:fs';
import { open, readFile } from 'node:fs/promises';
import type { Readable, Transform } from 'node:stream';
import { HostErrors } from '../errors.js';

/**
 * An archive encrypted with a key file the operator gives, in OpenSSL's own format, so that a standard
 * tool decrypts it without runplan-host: `openssl enc -d -aes-256-cbc -pbkdf2 -iter 100000 -md sha256
 * -pass file:KEY`. "Salted__", 8 bytes of salt, then AES-256-CBC with key and IV from PBKDF2-SHA256 of
 * the key file's first line. CBC authenticates nothing: the manifest's checksums, verified after
 * decryption, are what catch a changed archive.
 */
const MAGIC = Buffer.from('Salted__');
const ITERATIONS = 100_000;

/** The passphrase: the key file's first line, as openssl's -pass file: reads it. */
export async function readKeyFile(file: string): Promise<string> {
  const text = await readFile(file, 'utf8').catch(() => {
    throw HostErrors.INPUT_USAGE.create({ message: `cannot read the key file ${file}.`, file });
  });
  const passphrase = text.split(/\r?\n/)[0] ?? '';
  if (passphrase.length < 16)
    throw HostErrors.INPUT_USAGE.create({ message: `the key file ${file} holds no key of 16 characters or more on its first line (make one with: openssl rand -base64 32 > ${file}).`, file });
  return passphrase;
}

function keyAndIv(passphrase: string, salt: Buffer): { key: Buffer; iv: Buffer } {
  const derived = pbkdf2Sync(passphrase, salt, ITERATIONS, 48, 'sha256');
  return { key: derived.subarray(0, 32), iv: derived.subarray(32) };
}

/** The header to write first, and the cipher the archive goes through. */
export function encryption(passphrase: string): { header: Buffer; cipher: Transform } {
  const salt = randomBytes(8);
  const { key, iv } = keyAndIv(passphrase, salt);
  return { header: Buffer.concat([MAGIC, salt]), cipher: createCipheriv('aes-256-cbc', key, iv) };
}

export async function isEncrypted(file: string): Promise<boolean> {
  const handle = await open(file, 'r');
  try {
    const head = Buffer.alloc(MAGIC.length);
    await handle.read(head, 0, MAGIC.length, 0);
    return head.equals(MAGIC);
  } finally {
    await handle.close();
  }
}

/** The archive's bytes after its header, and the decipher they go through. */
export async function decryption(file: string, passphrase: string): Promise<{ source: Readable; decipher: Transform }> {
  const handle = await open(file, 'r');
  const salt = Buffer.alloc(8);
  try {
    await handle.read(salt, 0, 8, MAGIC.length);
  } finally {
    await handle.close();
  }
  const { key, iv } = keyAndIv(passphrase, salt);
  return { source: createReadStream(file, { start: MAGIC.length + 8 }), decipher: createDecipheriv('aes-256-cbc', key, iv) };
}
