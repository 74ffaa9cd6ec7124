// The parts of s3rver that @types/s3rver does not describe: the storage server replaces its built-in key pair and guards its file store.
declare module 's3rver/lib/models/account.js' {
  interface AWSAccount {
    createKeyPair(accessKeyId: string, secretAccessKey: string): void;
    revokeAccessKey(accessKeyId: string): void;
  }
  const Account: { readonly DUMMY_ACCOUNT: AWSAccount };
  export default Account;
}

declare module 's3rver/lib/models/error.js' {
  /** An error s3rver answers as S3 does: its code, the HTTP status S3 gives it, the XML body. */
  export default class S3Error extends Error {
    constructor(code: string, message: string, detail?: Record<string, string>);
  }
}

declare module 's3rver/lib/stores/filesystem.js' {
  /** s3rver's store: every file path it opens is made by these methods from a bucket, a key or an upload id. */
  export default class FilesystemStore {
    rootDirectory: string;
    getBucketPath(bucket: string): string;
    getResourcePath(bucket: string, key?: string, resource?: string): string;
    initiateUpload(bucket: string, key: string, uploadId: string, metadata: unknown): Promise<void>;
    putPart(bucket: string, uploadId: string, partNumber: string | number, content: unknown): Promise<unknown>;
    putObjectMultipart(bucket: string, uploadId: string, parts: unknown): Promise<unknown>;
  }
}
