import type { ErrorDefinition } from 'runplan/buildpack';

/** How the host's codes begin: RUNPLAN_HOST_E_<AREA>_<WHAT>. */
export const HOST_CODE_PREFIX = 'RUNPLAN_HOST';

/**
 * The host's own codes, RUNPLAN_HOST_E_<AREA>_<WHAT>, beside runplan's RUNPLAN_E_…
 * (a deploy that fails in runplan keeps runplan's code). Each is documented in
 * docs/errors.md (part runplan-host) and raised by a test (host/test/host-errors.test.ts).
 * Plain data, apart from errors.ts: the git program (git/git-main.ts) raises some of
 * them without loading runplan (git/push-error.ts says why).
 */
export const HOST_ERROR_DEFINITIONS = {
  INPUT_APP_NAME: {
    title: 'The application name is not valid',
    kind: 'input',
    fix: 'Name the application with 1 to 40 lower-case letters, digits and "-", starting with a letter (e.g. my-app).',
  },
  INPUT_ADDON_NAME: {
    title: 'The add-on name is not valid',
    kind: 'input',
    fix: 'Name the add-on with 1 to 40 lower-case letters, digits and "-", starting with a letter (e.g. main-db).',
  },
  INPUT_ORG: {
    title: 'The organization identifier is not valid',
    kind: 'input',
    fix: 'Give an organization identifier of 1 to 40 lower-case letters, digits, "_" and "-", starting with a letter (e.g. orga_acme).',
  },
  INPUT_ZONE: { title: 'The zone is not one of the service', kind: 'input', fix: 'Give --region par (Paris) or --region mtl (Montreal).' },
  INPUT_TYPE: { title: 'The application type is not one the host deploys', kind: 'input', fix: 'Give --type node, --type ruby or --type play1.' },
  INPUT_VARIABLE: {
    title: 'The environment variable cannot be set',
    kind: 'input',
    fix: 'Use a name of letters, digits and "_" that does not start with a digit, and a value without a NUL character.',
  },
  INPUT_KEY: {
    title: 'The SSH public key cannot be read',
    kind: 'input',
    fix: 'Give a file holding one OpenSSH public key line (ssh-ed25519 AAAA… or ssh-rsa AAAA…), such as ~/.ssh/id_ed25519.pub.',
  },
  INPUT_ACME_EMAIL: {
    title: 'The ACME account email is not an email address',
    kind: 'input',
    fix: 'Give --acme-email an address the certificate authority can write to (ops@example.com); --acme-directory and --acme-ca-root need it.',
  },
  INPUT_ACME_DIRECTORY: {
    title: 'The ACME directory is not an https:// URL',
    kind: 'input',
    fix: "Give --acme-directory the certificate authority's ACME directory URL, starting with https:// (Let's Encrypt's staging directory to try), or leave it out for Let's Encrypt's production directory.",
  },
  INPUT_ACME_CA_ROOT: {
    title: "The ACME server's root certificate cannot be read",
    kind: 'input',
    fix: "Give --acme-ca-root a PEM file holding the certificate that signs the ACME directory's HTTPS certificate (for a private ACME server only), readable by root; leave it out for a public CA.",
  },
  INPUT_USAGE: { title: 'The command line is not valid', kind: 'input', fix: 'Run runplan-host --help for the commands and their options.' },
  APP_NAME_TAKEN: { title: 'The organization already has an application of that name', kind: 'input', fix: 'Choose another name, or remove the other application first.' },
  APP_NOT_FOUND: {
    title: 'No application of that name or id',
    kind: 'input',
    fix: 'Give --app <name|id> of an application that `runplan-host apps` lists, or run the command in a folder whose git remote points at this host.',
  },
  KEY_TAKEN: {
    title: 'The organization already has that SSH key',
    kind: 'input',
    fix: 'Nothing to add: `runplan-host keys` lists it with its id. To replace its comment, remove it (keys rm <id>) and add it again.',
  },
  KEY_NOT_FOUND: { title: 'No SSH key with that id', kind: 'input', fix: 'Give a key id that `runplan-host keys` lists.' },
  ADDON_NAME_TAKEN: { title: 'The organization already has an add-on of that name', kind: 'input', fix: 'Choose another name, or remove the other add-on first.' },
  ADDON_PROVIDER_UNKNOWN: { title: 'The host offers no add-on of that kind', kind: 'input', fix: 'Give postgresql, redis or storage.' },
  ADDON_NOT_FOUND: { title: 'No add-on of that name or id', kind: 'input', fix: 'Give the name or id of an add-on that `runplan-host addons` lists.' },
  // Not bad input: the command was right, the add-on's state refuses it for now (exit 1; the API answers 409).
  ADDON_LINKED: {
    title: 'The add-on is still linked to applications',
    kind: 'deployment',
    fix: 'Unlink it from each application the message names (runplan-host unlink-addon, as the message spells it out), then remove it.',
  },
  ADDON_ORG_MISMATCH: {
    title: 'The add-on belongs to another organization than the application',
    kind: 'input',
    fix: "Link an add-on of the application's own organization (create one there with runplan-host addon create … --org <org>).",
  },
  LINK_ORG_MISMATCH: {
    title: 'The two applications belong to different organizations',
    kind: 'input',
    fix: 'Link applications of one organization only: their exposed variables never cross organizations.',
  },
  ADDON_SERVER_FAILED: {
    title: 'An add-on server (PostgreSQL, Redis, Ceph) did not start or answer',
    kind: 'deployment',
    fix: 'Read the end of its log quoted in the message; install its Debian package (apt-get install postgresql redis-server passwd, or --no-install-recommends ceph-mon ceph-osd radosgw) and free the port it names.',
  },
  ADDON_STORE_UNHEALTHY: {
    title: "The storage add-ons' Ceph cluster reports a health that would fail writes",
    kind: 'deployment',
    fix: 'Read the checks the message names (`ceph -c <data>/addons/storage/ceph/ceph.conf -n client.admin -k <data>/addons/storage/ceph/client.admin.keyring health detail`): free disk space for the monitor (MON_DISK_CRIT) or give the OSD a larger file or another disk (OSD_FULL), then try again.',
  },
  ADDON_STORAGE_MOVE: {
    title: "Storage add-ons still keep their objects in an earlier host's s3rver folders",
    kind: 'deployment',
    fix: 'Move them into the Ceph gateway: stop serve, run `runplan-host storage move` (it copies each bucket and object, compares counts and ETags, then removes the old folder), and start serve again.',
  },
  ADDON_STORAGE_MOVE_FAILED: {
    title: 'A storage add-on could not be moved into the Ceph gateway',
    kind: 'deployment',
    fix: "Correct what the message names (a bucket name the gateway refuses: rename that bucket's folder to a name S3 allows; the Ceph cluster's health; free space), then run `runplan-host storage move` again: the add-on's s3rver folder is as it was, and what was copied already is not copied twice.",
  },
  ENGINE_ADDON_UNREACHABLE: {
    title: 'The application is linked to an add-on its engine cannot reach',
    kind: 'input',
    fix: 'Unlink the add-on (runplan-host unlink-addon NAME --app APP) and link one created since the engine changed, or run the host on the engine the add-on was made for (runplan-host init --engine …).',
  },
  DOMAIN_INVALID: {
    title: 'The custom domain is not a host name the host can serve',
    kind: 'input',
    fix: 'Give a lower-case DNS host name of two labels at least (shop.example.com): letters, digits and "-" between dots, no wildcard, none of the names of the host\'s own domain it keeps (console, app-<uuid>).',
  },
  DOMAIN_TAKEN: {
    title: 'Another application of the host has that custom domain',
    kind: 'input',
    fix: 'Remove it from the application that has it first (runplan-host domain rm NAME), or choose another name. A name is served as one application only, across the whole host.',
  },
  DOMAIN_NOT_FOUND: {
    title: 'No application has that custom domain',
    kind: 'input',
    fix: 'Give a name that `runplan-host domains` lists (with the --org the application has).',
  },
  RELEASE_NOT_FOUND: { title: 'The application has no such release', kind: 'input', fix: 'Give a release number that `runplan-host releases` lists as succeeded.' },
  RELEASE_ALREADY_FINISHED: {
    title: 'A release already finished was given an outcome again',
    kind: 'internal',
    fix: 'This is a bug of runplan-host: report it with the application id and release number; the recorded outcome was kept.',
  },
  DEPLOY_NOTHING: { title: 'The application has never been deployed', kind: 'input', fix: 'Deploy it first with git push <remote> master.' },
  APP_USER_FAILED: {
    title: "An application's own user cannot be made",
    kind: 'deployment',
    fix: 'Run runplan-host as root on a machine with groupadd and useradd (package passwd), and keep the uids the store gives applications (800000–899999) free for them.',
  },
  HOST_NOT_INITIALISED: { title: 'The data folder holds no host', kind: 'input', fix: 'Run runplan-host init (with the same --data) first.' },
  HOST_NOT_SERVING: { title: 'The host is not serving', kind: 'deployment', fix: 'Start it with runplan-host serve (with the same --data), then run the command again.' },
  HOST_PART_FAILED: {
    title: 'A part of the host (sshd, Caddy) did not start',
    kind: 'deployment',
    fix: 'Install the part (apt-get install openssh-server caddy), free the port it names, and start runplan-host serve again.',
  },
  HOST_ALREADY_SERVING: { title: 'Another runplan-host serve uses this data folder', kind: 'deployment', fix: 'Stop the other one (its PID is given) or use another --data.' },
  SERVICE_UNIT_DIR: {
    title: 'The service unit cannot be written',
    kind: 'input',
    fix: 'Run install-service as root on a machine run by systemd (its units are in /etc/systemd/system), give --unit-dir an existing folder you may write, or print the unit with --print and install it yourself.',
  },
  API_UNAUTHORIZED: { title: 'The request to the host API has no valid token', kind: 'input', fix: 'Send the token of the data folder (api-token) as "Authorization: Bearer <token>".' },
  CONSOLE_SIGN_IN: {
    title: 'The token does not sign in to the console',
    kind: 'input',
    fix: "Sign in with the data folder's api-token (every organization) or with the token `runplan-host token --org <org>` prints (that organization only).",
  },
  CONSOLE_SIGNED_OUT: { title: 'The console session has ended', kind: 'input', fix: 'Sign in again: sessions end after 8 hours unused, when you sign out, and when runplan-host serve restarts.' },
  CONSOLE_FORM_TOKEN: {
    title: "The form does not carry the session's CSRF token",
    kind: 'input',
    fix: 'Reload the page and send the form again; a request made by another site, or with an old page of an earlier session, is refused.',
  },
  CONSOLE_PAGE_NOT_FOUND: { title: 'The console has no such page', kind: 'input', fix: 'Start from the console home page (/) and follow its links.' },
  PUSH_DENIED: {
    title: 'This key may not push to that application',
    kind: 'input',
    fix: "Push with a key of the application's organization (runplan-host keys add <org> <file.pub>), to a remote URL that `runplan-host create` printed.",
  },
  PUSH_BRANCH: { title: 'Only the master branch deploys', kind: 'input', fix: 'Push the master branch: git push <remote> master (or git push <remote> <branch>:master).' },
  PUSH_STALE: {
    title: 'master moved while this push waited',
    kind: 'input',
    fix: 'Another push of this application was accepted first: bring its commit into yours (from whoever pushed it) and push again, or push with --force (git push --force <remote> master) to replace it.',
  },
  PUSH_REF_UPDATE: {
    title: 'git could not move master to the pushed commit',
    kind: 'deployment',
    fix: "Push again; if it fails again, check the data folder's free space and that nothing but runplan-host writes the application's repository (<data>/git/<app id>.git).",
  },
  PUSH_ABANDONED: {
    title: 'The push ended before its release was accepted',
    kind: 'deployment',
    fix: 'Push again and let git push run to its end; the release that served before still serves and master did not move.',
  },
  SSH_COMMAND_REFUSED: {
    title: 'The host runs nothing over SSH but git push',
    kind: 'input',
    fix: 'Use the git remote with git push; the host gives no shell and forwards nothing.',
  },
  DEPLOY_FAILED: {
    title: 'The deployment failed; the previous release keeps serving',
    kind: 'deployment',
    fix: 'Read the lines above (the code of the step that failed and its fix), correct the application, and push again.',
  },
  DEPLOY_INTERRUPTED: {
    title: 'The deploy was interrupted by the host stopping',
    kind: 'deployment',
    fix: 'Push again (or run runplan-host restart); the release that served before the interrupted deploy is still the current one.',
  },
  EDGE_FAILED: {
    title: 'The HTTPS edge refused the change',
    kind: 'deployment',
    fix: "Read Caddy's answer in the message; the previous route stays. If the edge had stopped, serve starts it again by itself (runplan-host logs --host says when and why): try again once runplan-host status says it serves.",
  },
  STORE_NEWER: {
    title: 'The store was made by a newer runplan-host',
    kind: 'deployment',
    fix: 'Run the runplan-host version that last used this data folder, or a newer one; to go back to this version, restore the store from a backup made before the upgrade.',
  },
  STORE_MIGRATION_FAILED: {
    title: 'The store could not be copied into PostgreSQL',
    kind: 'deployment',
    fix: 'Give migrate-store an empty PostgreSQL database (createdb) that the role may create tables in, and read the cause in the message; the host keeps its SQLite store, unchanged, until a copy succeeds.',
  },
  STORE_OPEN_FAILED: {
    title: 'The store cannot be opened',
    kind: 'deployment',
    fix: "Check that the file is the host's store (store.sqlite in the data folder), that the user running runplan-host can read and write it and its folder, and that it is not damaged (restore it from a backup then).",
  },
  BACKUP_FAILED: {
    title: 'The backup could not be made',
    kind: 'deployment',
    fix: 'Read the part named in the message (the store, an add-on server, a repository, the archive file): start the host (runplan-host serve) so its add-on servers answer, check the free space and that the folder of --to exists and is writable, then run runplan-host backup again. No archive was left at --to.',
  },
  RESTORE_TARGET_NOT_EMPTY: {
    title: 'The data folder of the restore already holds a host',
    kind: 'input',
    fix: 'Restore into a new data folder (runplan-host restore FILE --data /a/new/folder), or move the host that is there away first: a restore never writes over a host.',
  },
  RESTORE_CORRUPT: {
    title: 'The backup archive is damaged or incomplete',
    kind: 'input',
    fix: 'Use another copy of the archive (the entry named in the message does not match the checksum its manifest.json records, or is missing); nothing was restored.',
  },
  RESTORE_FAILED: {
    title: 'The restore could not be carried out',
    kind: 'deployment',
    fix: 'Read the part named in the message (the store, an add-on, a repository), correct it (free space, PostgreSQL and Redis installed, --store for an archive of a PostgreSQL store), and run runplan-host restore again; nothing was left in the data folder.',
  },
} as const satisfies Record<string, Omit<ErrorDefinition, 'code'>>;
