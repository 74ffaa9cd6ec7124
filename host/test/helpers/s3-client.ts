import { request as httpRequest } from 'node:http';
import aws4 from 'aws4';

/** An S3 request as an app's SDK makes it, signed with a storage add-on's variables (or told not to sign). */
export function s3(v: Record<string, string>, method: string, path: string, body?: string, { sign = true } = {}): Promise<{ status: number; body: string }> {
  const [host = '', port = ''] = (v.STORAGE_ADDON_HOST ?? '').split(':');
  const signed = sign
    ? (aws4.sign(
        { host: v.STORAGE_ADDON_HOST, service: 's3', region: 'us-east-1', method, path, body },
        { accessKeyId: v.STORAGE_ADDON_KEY_ID ?? '', secretAccessKey: v.STORAGE_ADDON_KEY_SECRET ?? '' },
      ) as { path: string; headers: Record<string, string> })
    : { path, headers: {} };
  return new Promise((resolve, reject) => {
    const req = httpRequest({ host, port: Number(port), method, path: signed.path, headers: signed.headers }, (res) => {
      let text = '';
      res.on('data', (c: Buffer) => {
        text += c.toString();
      });
      res.on('end', () => resolve({ status: res.statusCode ?? 0, body: text }));
    });
    req.on('error', reject);
    req.end(body);
  });
}
