import { readFile } from 'node:fs/promises';
import { constants } from 'node:os';
import { resolve } from 'node:path';
import { parseArgs } from 'node:util';
import { isRunplanError } from 'runplan';
import { startProgram, writeFileAtomic } from 'runplan/process';
import { parseEnvFile } from 'runplan/buildpack';
import { cleanEnvironment, droppedNames } from '../clean-environment.js';
import { HostErrors } from '../errors.js';
import { readApiToken } from '../host-files.js';
import { initHost } from '../init.js';
import { backupHost } from '../backup/backup-host.js';
import { restoreHost } from '../backup/restore-host.js';
import { moveStorageAddons } from '../addons/storage-move.js';
import { acmeSettings } from '../acme-settings.js';
import { DEFAULT_DATA_DIR, hostPaths, type HostPaths } from '../paths.js';
import { startHost } from '../serve.js';
import type { AddonView, AppView, DomainView, ReleaseView, VariableView } from '../service.js';
import type { PartHealth } from '../supervision/supervisor.js';
import { consoleUrl, readSettings } from '../settings.js';
import { orgToken } from '../console/sessions.js';
import { listenForStopSignals } from '../stop-signals.js';
import { checkOrg } from '../validate.js';
import { refuseWhileServing } from '../serving.js';
import { migrateStore } from '../store/migrate-store.js';
import { usesPostgres } from '../store/open-store.js';
import { urlWithoutPassword } from '../store/postgres-store.js';
import { ApiClient } from '../api/api-client.js';
import { appOfFolder } from './find-app.js';
import { currentServiceManager, describeServiceManager, forgetServiceManagerVariables, passServiceManager, readServiceManager, type ServiceManager } from '../service-manager.js';
import { DEFAULT_UNIT_DIR, installServiceUnit, serviceUnit, UNIT_NAME } from '../service-unit.js';

const USAGE = `runplan-host: a small hosting service on runplan (git push, health-gated deploys, an HTTPS edge)

  runplan-host init [--domain localhost] [--listen 127.0.0.1] [--ssh-port 2222] [--https-port 8443] [--http-port 8080] [--ssh-user git] [--cache-dir DIR] [--store sqlite|postgres://…]
                    [--engine local|swarm] [--docker-host URL]   releases as local processes, or as the services of a Docker swarm
                    [--release-network own|shared] [--disk-mb 4096]   the local engine's walls: each release its own network
                                          (0.0.0.0:8080), each application a disk of that many MiB (0: none); a new host's default
                    [--acme-email EMAIL [--acme-directory URL] [--acme-ca-root FILE]]   certificates from an ACME CA (default
                                          Let's Encrypt) instead of the edge's own CA; init again with every option to change them
  runplan-host migrate-store --to postgres://…   copy the SQLite store into an empty PostgreSQL database, then use it
  runplan-host serve [--stop-apps-on-exit]   start the API, git, the console; take over (or start) sshd, the edge, the add-ons and
                                          every app; SIGTERM stops serve alone (the apps go on serving), or all of it with the flag
  runplan-host backup --to FILE [--encrypt-with KEYFILE]   one archive of the whole host (store, keys, repositories, edge, add-ons' data), made while it serves
  runplan-host restore FILE [--decrypt-with KEYFILE] [--ssh-port N] [--https-port N] [--http-port N] [--ssh-user NAME] [--store postgres://…]
                                          that archive made a host again in a new --data folder; then runplan-host serve
  runplan-host storage move               with serve stopped: move the storage add-ons an earlier host kept in s3rver's folders
                                          into the Ceph gateway (counts and ETags checked); then redeploy the applications it names
  runplan-host stop-apps                  with serve stopped: stop every release, the edge, sshd and the add-on servers
  runplan-host install-service [--unit-dir ${DEFAULT_UNIT_DIR}] [--print]   a systemd unit that runs serve (stopping it stops serve alone)
  runplan-host status                     every part checked now (the edge, sshd, add-on servers); exit 1 when one is down
  runplan-host create --type <node|ruby|play1> <app-name> --region <par|mtl> --org <org>
  runplan-host apps [--org ORG]
  runplan-host keys add <org> <file.pub> | keys rm <key-id> | keys [--org ORG]
  runplan-host env [--show] | env set NAME VALUE | env rm NAME | env import FILE
  runplan-host restart | rollback [RELEASE] | releases | logs [-f] | open
                                          (rollback without RELEASE: to the newest succeeded release before the current one)
  runplan-host logs --host [-f]           the host's own log: serve's start, each part that died and was started again
  runplan-host build-instance [dedicated|shared]   builds sized for the dedicated build instance (advised for webpacker)
  runplan-host token --org ORG            a token that signs in to the web console as that organization
  runplan-host addon create <postgresql|redis|storage> <name> --org <org> [--region <par|mtl>]
  runplan-host addon rm <name> | addon env <name> [--show] | addons [--org ORG]
  runplan-host link-addon <name> | unlink-addon <name>     (a new release with the add-on's variables)
  runplan-host expose [--show] | expose set NAME VALUE | expose rm NAME   (what applications linked to this one receive)
  runplan-host link <other-app> | unlink <other-app>       (a new release with what the other application exposes)
  runplan-host domain add <name> | domain rm <name> | domains   an application's custom domains (shop.example.com), served at once

Every command takes --data DIR (default ${DEFAULT_DATA_DIR}, or RUNPLAN_HOST_DATA) and --json.
Commands on an app take --app <name|id>, or find it from the git remote of the current folder.
Then deploy with: git push <remote> master`;

const OPTIONS = {
  data: { type: 'string' },
  json: { type: 'boolean' },
  app: { type: 'string' },
  org: { type: 'string' },
  type: { type: 'string' },
  region: { type: 'string' },
  show: { type: 'boolean' },
  follow: { type: 'boolean', short: 'f' },
  host: { type: 'boolean' },
  domain: { type: 'string' },
  listen: { type: 'string' },
  'ssh-port': { type: 'string' },
  'https-port': { type: 'string' },
  'http-port': { type: 'string' },
  'ssh-user': { type: 'string' },
  'cache-dir': { type: 'string' },
  store: { type: 'string' },
  engine: { type: 'string' },
  'docker-host': { type: 'string' },
  'release-network': { type: 'string' },
  'disk-mb': { type: 'string' },
  'acme-email': { type: 'string' },
  'acme-directory': { type: 'string' },
  'acme-ca-root': { type: 'string' },
  to: { type: 'string' },
  'encrypt-with': { type: 'string' },
  'decrypt-with': { type: 'string' },
  'stop-apps-on-exit': { type: 'boolean' },
  'unit-dir': { type: 'string' },
  print: { type: 'boolean' },
  help: { type: 'boolean', short: 'h' },
} as const;

type Values = ReturnType<typeof parse>['values'];

function parse(argv: string[]) {
  try {
    return parseArgs({ args: argv, options: OPTIONS, allowPositionals: true, strict: true });
  } catch (error) {
    throw HostErrors.INPUT_USAGE.create({ message: (error as Error).message.replace(/\.?$/, '.') });
  }
}

interface Io {
  readonly out: (text: string) => void;
  readonly err: (text: string) => void;
}

export async function main(argv: string[], io: Io): Promise<number> {
  const json = argv.includes('--json');
  try {
    const { values, positionals } = parse(argv);
    if (values.help || positionals.length === 0) {
      io.out(`${USAGE}\n`);
      return positionals.length === 0 && !values.help ? 2 : 0;
    }
    const paths = hostPaths(resolve(values.data ?? process.env.RUNPLAN_HOST_DATA ?? DEFAULT_DATA_DIR));
    return await run(positionals, values, paths, io, json);
  } catch (error) {
    if (json) io.out(`${JSON.stringify({ error: isRunplanError(error) ? error.toJSON() : { code: null, message: (error as Error).message } })}\n`);
    else
      io.err(
        isRunplanError(error)
          ? `error ${error.message}\n${error.file ? `  file: ${error.file}\n` : ''}${error.variable ? `  variable: ${error.variable}\n` : ''}  fix: ${error.fix}\n`
          : `error ${(error as Error)?.message}\n`,
      );
    return isRunplanError(error) && error.kind === 'input' ? 2 : 1;
  }
}

async function run(positionals: string[], values: Values, paths: HostPaths, io: Io, json: boolean): Promise<number> {
  const [command, ...rest] = positionals;
  const print = (data: unknown, human: () => string) => io.out(json ? `${JSON.stringify(data)}\n` : `${human()}\n`);
  switch (command) {
    case 'init': {
      const port = (name: 'ssh-port' | 'https-port' | 'http-port') => (values[name] === undefined ? undefined : Number(values[name]));
      const chosen = Object.fromEntries(
        Object.entries({
          domain: values.domain,
          listenAddress: values.listen,
          sshPort: port('ssh-port'),
          httpsPort: port('https-port'),
          httpPort: port('http-port'),
          sshUser: values['ssh-user'],
          cacheDir: values['cache-dir'] === undefined ? undefined : resolve(values['cache-dir']),
          engine: values.engine,
          dockerHost: values['docker-host'],
          releaseNetwork: values['release-network'],
          diskMb: values['disk-mb'] === undefined ? undefined : Number(values['disk-mb']),
          acme: acmeSettings({ email: values['acme-email'], directory: values['acme-directory'], caRoot: values['acme-ca-root'] }),
        }).filter(([, v]) => v !== undefined),
      );
      const { settings, created } = await initHost(paths, chosen, values.store === undefined ? {} : { store: values.store });
      print({ data: paths.root, settings, created }, () => `${created ? 'initialised' : 'kept'} the host in ${paths.root}; start it with: runplan-host serve --data ${paths.root}`);
      return 0;
    }
    case 'serve': {
      // Read before the environment is cleaned: systemd's variables say it started serve, and are passed on to nothing.
      const manager = currentServiceManager();
      forgetServiceManagerVariables(process.env);
      return droppedNames(process.env).length === 0 ? serve(paths, io, values['stop-apps-on-exit'] === true, manager) : serveInCleanEnvironment(io, manager);
    }
    case 'install-service': {
      const unit = serviceUnit({ data: paths.root });
      if (values.print) {
        io.out(unit);
        return 0;
      }
      const file = await installServiceUnit(resolve(values['unit-dir'] ?? DEFAULT_UNIT_DIR), unit);
      const name = UNIT_NAME.replace(/\.service$/, '');
      print({ unit: file, data: paths.root }, () =>
        [
          `wrote ${file} (serve of ${paths.root})`,
          `then: systemctl daemon-reload && systemctl enable --now ${name}`,
          `systemctl stop ${name} stops serve alone (the applications go on); runplan-host stop-apps --data ${paths.root} then stops the rest`,
        ].join('\n'),
      );
      return 0;
    }
    case 'stop-apps':
      return stopApps(paths, io);
    case 'migrate-store': {
      if (!values.to || !/^postgres(ql)?:\/\//.test(values.to)) throw usage('migrate-store --to postgres://user:password@host:port/database');
      if (usesPostgres(paths)) throw HostErrors.INPUT_USAGE.create({ message: "this host's store is in PostgreSQL already." });
      await refuseWhileServing(paths);
      const tables = await migrateStore(paths.store, values.to);
      // From now on the host opens PostgreSQL; store.sqlite stays as it was, a copy to go back to.
      await writeFileAtomic(paths.storeUrl, `${values.to}\n`, 0o600);
      print(
        { store: urlWithoutPassword(values.to), tables },
        () =>
          `copied the store into ${urlWithoutPassword(values.to as string)}; the host uses it from its next start (${paths.store} is kept, unchanged)\n${tables.map((t) => `  ${t.table.padEnd(18)} ${String(t.rows).padStart(7)} rows  sha256 ${t.checksum.slice(0, 16)}`).join('\n')}`,
      );
      return 0;
    }
    case 'backup': {
      if (!values.to) throw usage('backup --to FILE [--encrypt-with KEYFILE]');
      const encryptWith = values['encrypt-with'] === undefined ? {} : { encryptWith: resolve(values['encrypt-with']) };
      const result = await backupHost(paths, resolve(values.to), (line) => io.err(`${line}\n`), encryptWith);
      print(
        result,
        () =>
          `wrote ${result.file} (0600${result.encrypted ? ', encrypted with the key file' : ": it holds the host's secrets, encrypt it before it leaves this machine"}): ${result.entries} entries, ${result.apps} application(s), ${result.addons} add-on(s)`,
      );
      return 0;
    }
    case 'restore': {
      const [file] = rest;
      if (!file) throw usage('restore FILE --data DIR [--decrypt-with KEYFILE] [--ssh-port N] [--https-port N] [--http-port N] [--ssh-user NAME] [--store postgres://…]');
      const port = (name: 'ssh-port' | 'https-port' | 'http-port') => {
        const value = values[name];
        if (value === undefined) return undefined;
        if (!/^\d+$/.test(value) || Number(value) < 1 || Number(value) > 65535) throw HostErrors.INPUT_USAGE.create({ message: `--${name} must be a port number (1-65535).` });
        return Number(value);
      };
      const options = Object.fromEntries(
        Object.entries({
          sshPort: port('ssh-port'),
          httpsPort: port('https-port'),
          httpPort: port('http-port'),
          sshUser: values['ssh-user'],
          store: values.store,
          decryptWith: values['decrypt-with'] === undefined ? undefined : resolve(values['decrypt-with']),
        }).filter(([, v]) => v !== undefined),
      );
      const result = await restoreHost(resolve(file), paths, options, (line) => io.err(`${line}\n`));
      print({ data: paths.root, ...result }, () =>
        [
          `restored ${result.apps} application(s) and ${result.addons} add-on(s) into ${paths.root}`,
          ...result.movedAddons.map((m) => `  the add-on ${m.name} moved from port ${m.from} (taken here) to ${m.to}: its applications get the new one when serve deploys them`),
          ...result.newKeys.map((name) => `  the storage add-on ${name} has new keys in this host's S3 gateway: its applications get them when serve deploys them`),
          `start it with: runplan-host serve --data ${paths.root} (it deploys every application's current release again)`,
        ].join('\n'),
      );
      return 0;
    }
    case 'storage': {
      if (rest[0] !== 'move' || rest.length > 1) throw usage('storage move');
      await refuseWhileServing(paths);
      const result = await moveStorageAddons(paths, (line) => io.err(`${line}\n`));
      const redeploy = result.moved.filter((m) => m.apps.length > 0);
      print(result, () =>
        [
          result.moved.length === 0
            ? `no storage add-on to move: every one is in the S3 gateway${result.cleared.length > 0 ? ` (the s3rver folders of ${result.cleared.join(', ')} removed)` : ''}`
            : `moved ${result.moved.length} storage add-on(s) into the S3 gateway:`,
          ...result.moved.map((m) => `  ${m.org}/${m.name}: ${m.buckets} bucket(s), ${m.objects} object(s), ${m.bytes} bytes`),
          ...(redeploy.length > 0
            ? [
                'their keys and port are new: redeploy the applications linked to them once serve runs again, for instance with runplan-host restart --app APP:',
                ...redeploy.map((m) => `  ${m.org}/${m.name}: ${m.apps.join(', ')}`),
              ]
            : []),
        ].join('\n'),
      );
      return 0;
    }
    case 'token': {
      // Derived from the API token, nothing stored: it works as soon as it is printed, and a new API token withdraws it.
      const org = checkOrg(values.org ?? '');
      const token = orgToken(await readApiToken(paths), org);
      const url = consoleUrl(await readSettings(paths));
      print({ org, token, console: url }, () => `${token}\n(signs in to ${url} as organization ${org}: its applications and add-ons only)`);
      return 0;
    }
    default:
      break;
  }
  const client = new ApiClient(paths.apiSocket, await readApiToken(paths));
  const app = async () => {
    const id = values.app ?? (await appOfFolder(process.cwd()));
    if (!id) throw HostErrors.APP_NOT_FOUND.create({ message: 'no --app was given and no git remote of this folder points at an application of this host.' });
    return (await client.json<{ app: AppView }>('GET', `/apps/${encodeURIComponent(id)}${values.org ? `?org=${encodeURIComponent(values.org)}` : ''}`)).app;
  };
  const streamed = async (path: string, body: unknown, method = 'POST') => {
    const lines: string[] = [];
    const status = await client.lines(method, path, body, (line) => (json ? lines.push(line) : io.out(`${line}\n`)));
    if (json) io.out(`${JSON.stringify({ ok: status === 0, lines })}\n`);
    return status === 0 ? 0 : 1;
  };
  switch (command) {
    case 'status': {
      const settings = await readSettings(paths);
      const { serving, apps, parts } = await client.json<{ serving: boolean; apps: number; parts: PartHealth[] }>('GET', '/status');
      const root = `${paths.edgeDir}/data/caddy/pki/authorities/local/root.crt`;
      const down = parts.filter((p) => !p.up).map((p) => p.name);
      const serviceManager = await readServiceManager(paths);
      print({ serving, apps, parts, rootCertificate: root, settings, serviceManager: serviceManager ?? null }, () =>
        [
          serving
            ? `serving ${apps} application(s) from ${paths.root}`
            : `NOT serving: ${down.join(', ')} ${down.length > 1 ? 'are' : 'is'} down (serve starts ${down.length > 1 ? 'them' : 'it'} again; runplan-host logs --host says why)`,
          ...parts.map(
            (p) =>
              `  ${p.up ? 'up  ' : 'DOWN'}  ${p.name}: ${p.detail}${p.pid === null ? '' : `; PID ${p.pid}`}${p.restarts > 0 ? `; started again ${p.restarts} time(s), last after it ${p.lastExit}` : ''}`,
          ),
          describeServiceManager(serviceManager),
          `releases run ${settings.engine === 'swarm' ? `as services of the Docker swarm at ${settings.dockerHost ?? 'DOCKER_HOST'}` : 'on this machine'}`,
          settings.acme === undefined ? `edge root certificate: ${root}` : `certificates from the ACME CA ${settings.acme.directory} (account ${settings.acme.email})`,
        ].join('\n'),
      );
      return serving ? 0 : 1;
    }
    case 'create': {
      const [name] = rest;
      if (!name || !values.type || !values.region || !values.org) throw usage('create --type <node|ruby|play1> <app-name> --region <par|mtl> --org <org>');
      const { app: created } = await client.json<{ app: AppView }>('POST', '/apps', { name, org: values.org, zone: values.region, type: values.type });
      print(
        created,
        () =>
          `created ${created.name} (${created.id}) in ${created.org}, zone ${created.zone}\n  git remote: ${created.gitRemote}\n  url:        ${created.url}\nthen: git remote add runplan ${created.gitRemote} && git push runplan master`,
      );
      return 0;
    }
    case 'apps': {
      const { apps } = await client.json<{ apps: AppView[] }>('GET', `/apps${values.org ? `?org=${encodeURIComponent(values.org)}` : ''}`);
      print(
        { apps },
        () => apps.map((a) => `${a.id}  ${a.org}/${a.name}  ${a.type}  ${a.zone}  ${a.serving ? `release ${a.serving.release}` : 'not serving'}  ${a.url}`).join('\n') || 'no applications',
      );
      return 0;
    }
    case 'open': {
      const a = await app();
      print({ url: a.url }, () => a.url);
      return 0;
    }
    case 'build-instance': {
      const [choice] = rest;
      const a = await app();
      if (choice === undefined) {
        print({ dedicatedBuildInstance: a.dedicatedBuildInstance }, () => `${a.name} builds on ${a.dedicatedBuildInstance ? 'the dedicated build instance' : 'its own instance'}`);
        return 0;
      }
      if (choice !== 'dedicated' && choice !== 'shared') throw usage('build-instance [dedicated|shared]');
      const { app: changed } = await client.json<{ app: AppView }>('PATCH', `/apps/${a.id}`, { dedicatedBuildInstance: choice === 'dedicated' });
      const size = `${changed.buildInstance.cpus} CPUs, ${changed.buildInstance.memoryMb} MiB`;
      print(
        { dedicatedBuildInstance: changed.dedicatedBuildInstance },
        () => `${changed.name} ${changed.dedicatedBuildInstance ? `builds on the dedicated build instance (${size})` : 'builds on its own instance'} from its next deploy or restart`,
      );
      return 0;
    }
    case 'keys': {
      const [sub, ...args] = rest;
      if (sub === 'add') {
        const [org, file] = args;
        if (!org || !file) throw usage('keys add <org> <file.pub>');
        const text = await readFile(file, 'utf8').catch(() => {
          throw HostErrors.INPUT_KEY.create({ message: `cannot read ${file}.`, file });
        });
        const { key } = await client.json<{ key: { id: string; fingerprint: string } }>('POST', '/keys', { org, publicKey: text, file });
        print({ key }, () => `added ${key.id} (${key.fingerprint}) to ${org}`);
        return 0;
      }
      if (sub === 'rm') {
        if (!args[0]) throw usage('keys rm <key-id>');
        await client.json('DELETE', `/keys/${encodeURIComponent(args[0])}`);
        print({ removed: args[0] }, () => `removed ${args[0]}`);
        return 0;
      }
      if (sub !== undefined) throw usage('keys [add <org> <file.pub> | rm <key-id>]');
      const { keys } = await client.json<{ keys: { id: string; org: string; fingerprint: string; comment: string }[] }>('GET', `/keys${values.org ? `?org=${encodeURIComponent(values.org)}` : ''}`);
      print({ keys }, () => keys.map((k) => `${k.id}  ${k.org}  ${k.fingerprint}  ${k.comment}`).join('\n') || 'no keys');
      return 0;
    }
    case 'env':
    case 'expose': {
      const a = await app();
      const [sub, ...args] = rest;
      const path = `/apps/${a.id}/${command === 'env' ? 'env' : 'exposed'}`;
      // Exposed variables reach the applications linked to this one at their next deploy or restart.
      const effect = command === 'env' ? 'at the next deploy or restart' : 'for the applications linked to it at their next deploy or restart';
      if (sub === 'set') {
        const [name, value] = args;
        if (!name || value === undefined) throw usage(`${command} set NAME VALUE`);
        await client.json('PATCH', path, { set: { [name]: value } });
        print({ set: name }, () => `${name} ${command === 'env' ? 'set' : 'exposed'} on ${a.name}: it takes effect ${effect}`);
        return 0;
      }
      if (sub === 'rm') {
        if (!args[0]) throw usage(`${command} rm NAME`);
        await client.json('PATCH', path, { remove: [args[0]] });
        print({ removed: args[0] }, () => `${args[0]} removed from ${a.name}: it takes effect ${effect}`);
        return 0;
      }
      if (sub === 'import') {
        if (!args[0]) throw usage(`${command} import FILE`);
        const text = await readFile(args[0], 'utf8').catch(() => {
          throw HostErrors.INPUT_USAGE.create({ message: `cannot read ${args[0]}.`, file: args[0] });
        });
        const set = Object.fromEntries(parseEnvFile(text, args[0]).map((v) => [v.name, v.value]));
        await client.json('PATCH', path, { set });
        print({ set: Object.keys(set) }, () => `${Object.keys(set).length} variable(s) ${command === 'env' ? 'set' : 'exposed'} on ${a.name}: they take effect ${effect}`);
        return 0;
      }
      if (sub !== undefined) throw usage(`${command} [--show] | ${command} set NAME VALUE | ${command} rm NAME | ${command} import FILE`);
      const view = await client.json<{ variables: VariableView[]; removed: string[] }>('GET', `${path}${values.show ? '?show=1' : ''}`);
      print(view, () =>
        [
          ...view.variables.map((v) => `${v.name}=${v.value}${v.changed ? `  (${v.changed} since the serving release)` : ''}`),
          ...view.removed.map((n) => `${n} (removed since the serving release)`),
        ].join('\n'),
      );
      return 0;
    }
    case 'domain': {
      const [sub, name, ...more] = rest;
      const org = values.org ? `?org=${encodeURIComponent(values.org)}` : '';
      if (sub === 'add' && name && more.length === 0) {
        const a = await app();
        const { domain } = await client.json<{ domain: DomainView }>('POST', `/apps/${a.id}/domains${org}`, { name });
        print({ domain }, () => `${domain.name} serves ${domain.org}/${domain.app} from now on: ${domain.url} (once its DNS points at this machine)`);
        return 0;
      }
      if (sub === 'rm' && name && more.length === 0) {
        const { domain } = await client.json<{ domain: DomainView }>('DELETE', `/domains/${encodeURIComponent(name)}${org}`);
        print({ removed: domain }, () => `${domain.name} no longer serves ${domain.org}/${domain.app}`);
        return 0;
      }
      throw usage('domain add <name> [--app <app>] | domain rm <name>');
    }
    case 'domains': {
      const query = new URLSearchParams({ ...(values.app ? { app: values.app } : {}), ...(values.org ? { org: values.org } : {}) }).toString();
      const { domains } = await client.json<{ domains: DomainView[] }>('GET', `/domains${query ? `?${query}` : ''}`);
      print({ domains }, () => domains.map((d) => `${d.name}  ${d.org}/${d.app}  ${d.url}`).join('\n') || 'no custom domains');
      return 0;
    }
    case 'addons': {
      const { addons } = await client.json<{ addons: AddonView[] }>('GET', `/addons${values.org ? `?org=${encodeURIComponent(values.org)}` : ''}`);
      print(
        { addons },
        () => addons.map((a) => `${a.id}  ${a.org}/${a.name}  ${a.provider}  ${a.zone}  ${a.linkedTo.length > 0 ? `linked to ${a.linkedTo.join(', ')}` : 'not linked'}`).join('\n') || 'no add-ons',
      );
      return 0;
    }
    case 'addon': {
      const [sub, ...args] = rest;
      const org = values.org ? `?org=${encodeURIComponent(values.org)}` : '';
      if (sub === 'create') {
        const [kind, name] = args;
        if (!kind || !name || !values.org) throw usage('addon create <postgresql|redis|storage> <name> --org <org> [--region <par|mtl>]');
        const { addon } = await client.json<{ addon: AddonView }>('POST', '/addons', { kind, name, org: values.org, zone: values.region ?? 'par' });
        print({ addon }, () => `created ${addon.provider} add-on ${addon.name} (${addon.id}) in ${addon.org}; link it with: runplan-host link-addon ${addon.name} --app <app>`);
        return 0;
      }
      if (sub === 'rm') {
        if (!args[0]) throw usage('addon rm <name>');
        await client.json('DELETE', `/addons/${encodeURIComponent(args[0])}${org}`);
        print({ removed: args[0] }, () => `removed the add-on ${args[0]} and its data`);
        return 0;
      }
      if (sub === 'env') {
        if (!args[0]) throw usage('addon env <name> [--show]');
        const query = [values.org ? `org=${encodeURIComponent(values.org)}` : '', values.show ? 'show=1' : ''].filter(Boolean).join('&');
        const { variables } = await client.json<{ variables: { name: string; value: string }[] }>('GET', `/addons/${encodeURIComponent(args[0])}/env${query ? `?${query}` : ''}`);
        print({ variables }, () => variables.map((v) => `${v.name}=${v.value}`).join('\n'));
        return 0;
      }
      throw usage('addon create <kind> <name> --org <org> | addon rm <name> | addon env <name> [--show]');
    }
    case 'link-addon':
    case 'unlink-addon':
    case 'link':
    case 'unlink': {
      const a = await app();
      const addon = command.endsWith('-addon');
      if (!rest[0]) throw usage(`${command} <${addon ? 'add-on' : 'application'} name>`);
      const path = `/apps/${a.id}/${addon ? 'addons' : 'links'}`;
      return command.startsWith('link') ? streamed(path, { [addon ? 'addon' : 'app']: rest[0] }) : streamed(`${path}/${encodeURIComponent(rest[0])}`, undefined, 'DELETE');
    }
    case 'restart':
      return streamed(`/apps/${(await app()).id}/restart`, {});
    case 'rollback': {
      const a = await app();
      if (rest[0] !== undefined && !/^[1-9][0-9]*$/.test(rest[0])) throw usage('rollback [RELEASE]');
      return streamed(`/apps/${a.id}/rollback`, rest[0] === undefined ? {} : { release: Number(rest[0]) });
    }
    case 'releases': {
      const a = await app();
      const { releases } = await client.json<{ releases: ReleaseView[] }>('GET', `/apps/${a.id}/releases`);
      print(
        { releases },
        () =>
          releases
            .map(
              (r) =>
                `v${r.number}  ${r.status}${a.currentRelease === r.number ? ' (current)' : ''}  ${r.cause} of ${r.commit.slice(0, 12)} by ${r.by}  ${r.startedAt}${r.errorCode ? `  ${r.errorCode}` : ''}`,
            )
            .join('\n') || 'no releases',
      );
      return 0;
    }
    case 'logs': {
      if (values.host) {
        if (values.follow) {
          await client.lines('GET', '/logs?follow=1', undefined, (line) => io.out(`${line}\n`));
          return 0;
        }
        const { lines } = await client.json<{ lines: string[] }>('GET', '/logs');
        print({ lines }, () => lines.join('\n'));
        return 0;
      }
      const a = await app();
      if (values.follow) {
        await client.lines('GET', `/apps/${a.id}/logs?follow=1`, undefined, (line) => io.out(`${line}\n`));
        return 0;
      }
      const { lines } = await client.json<{ lines: string[] }>('GET', `/apps/${a.id}/logs`);
      print({ lines }, () => lines.join('\n'));
      return 0;
    }
    default:
      throw usage(`a command: ${command} is not one`);
  }
}

function usage(what: string) {
  return HostErrors.INPUT_USAGE.create({ message: `usage: runplan-host ${what}.` });
}

/**
 * Runs until SIGTERM or SIGINT, then stops: serve alone (the API, git, the console, the deploys under way),
 * every application serving on for the next serve to take over; or, with `stopApps`, everything it runs.
 */
async function serve(paths: HostPaths, io: Io, stopApps: boolean, serviceManager: ServiceManager | null): Promise<number> {
  const log = (line: string) => io.err(`${line}\n`);
  // Listened for before anything starts: a signal while the applications are brought back (they may already
  // answer) stops the host once it has started, instead of killing it with what it started left running.
  const stopSignals = listenForStopSignals();
  const host = await startHost(paths, log, { stopAppsOnExit: stopApps, serviceManager });
  const signal = await stopSignals.received;
  if (stopApps) {
    log(`==> ${signal}: stopping every release, the edge, sshd and the add-on servers`);
    await host.stop({ apps: true });
    log('==> stopped; nothing left running');
  } else {
    log(`==> ${signal}: stopping serve; the applications, the edge, sshd and the add-on servers go on (runplan-host stop-apps stops them)`);
    await host.stop({ apps: false });
    log('==> serve stopped; the applications still serve');
  }
  return 0;
}

/** Everything a serve left running (releases, the edge, sshd, add-on servers) taken over, then stopped: refused while serve runs. */
async function stopApps(paths: HostPaths, io: Io): Promise<number> {
  const log = (line: string) => io.err(`${line}\n`);
  const host = await startHost(paths, log, { adoptOnly: true, stopAppsOnExit: true });
  log('==> stopping every release, the edge, sshd and the add-on servers');
  await host.stop({ apps: true });
  log('==> stopped; nothing left running');
  return 0;
}

/**
 * serve started with variables beyond its allow-list (src/clean-environment.ts), as from an
 * operator's shell or `npm run`: it starts itself again with only those it keeps (Node.js 20
 * has no execve), passes the stop signals on, and exits as that serve does. The serve that
 * runs the host, and everything it starts, never had the others.
 */
function serveInCleanEnvironment(io: Io, serviceManager: ServiceManager | null): Promise<number> {
  const dropped = droppedNames(process.env).length;
  io.err(`==> serve starts in a clean environment: ${dropped} variable(s) of the one it was given are left out (docs/host.md, "serve's environment")\n`);
  const child = startProgram(process.execPath, [...process.execArgv, '--', process.argv[1] as string, ...process.argv.slice(2)], {
    env: { ...cleanEnvironment(process.env), ...passServiceManager(serviceManager) },
    stdio: 'inherit',
    timeoutMs: 0,
    // It stops when told (the signals passed on), not when this process does.
    keepRunningOnExit: true,
  });
  const forward = (signal: NodeJS.Signals) => child.kill(signal);
  for (const signal of ['SIGTERM', 'SIGINT'] as const) process.on(signal, forward);
  return child.done.then(({ startError, exitCode, signal }) => {
    if (startError !== undefined) throw Object.assign(new Error(`spawn ${process.execPath} ${startError}`), { code: startError });
    return exitCode ?? 128 + (signal ? constants.signals[signal] : 0);
  });
}
