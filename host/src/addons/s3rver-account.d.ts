// s3rver's account registry, which @types/s3rver does not describe: the storage server replaces its built-in key pair.
declare module 's3rver/lib/models/account.js' {
  interface AWSAccount {
    createKeyPair(accessKeyId: string, secretAccessKey: string): void;
    revokeAccessKey(accessKeyId: string): void;
  }
  const Account: { readonly DUMMY_ACCOUNT: AWSAccount };
  export default Account;
}
