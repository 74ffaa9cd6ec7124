import { execFile } from 'node:child_process';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { afterAll, describe, expect, it } from 'vitest';
import { tempDir } from '../../test/helpers/temp.js';
import { HostErrors } from '../src/errors.js';
import { APP_UIDS, AppUsers, appUserName } from '../src/tenancy/app-users.js';
import { openSqliteStore } from '../src/store/sqlite-store.js';

const run = promisify(execFile);
const made: string[] = [];
const id = async (what: 'passwd' | 'group', key: string) => (await run('getent', [what, key]).catch(() => ({ stdout: '' }))).stdout.trim();

/**
 * Each application's own user, from the store to the machine's passwd database
 * (host/src/tenancy/app-users.ts): a uid of the range, given once; the same user
 * again on a machine that lacks it; a refusal, with the code, where the machine's
 * users disagree with the store.
 */
describe.runIf(process.getuid?.() === 0)("an application's own user", () => {
  afterAll(async () => {
    for (const name of made) {
      await run('userdel', [name]).catch(() => undefined);
      await run('groupdel', [name]).catch(() => undefined);
    }
  });

  it('gives each application a uid of the range, its own group, no home and no login, and the same user again', async () => {
    const store = await openSqliteStore(join(await tempDir(), 'store.sqlite'));
    const app = await store.createApp({ name: 'one', org: 'acme', zone: 'par', type: 'node' });
    const other = await store.createApp({ name: 'two', org: 'acme', zone: 'par', type: 'node' });
    const users = new AppUsers(store);
    const user = await users.ensure(app.id);
    made.push(user.name);
    const second = await users.ensure(other.id);
    made.push(second.name);
    expect(user.name).toBe(appUserName(app.id));
    expect(user.uid).toBeGreaterThanOrEqual(APP_UIDS.first);
    expect(second.uid).toBeGreaterThan(user.uid);
    expect(user.gid).toBe(user.uid);
    expect(await id('passwd', user.name)).toBe(`${user.name}:x:${user.uid}:${user.uid}:runplan-host ${app.id}:/nonexistent:/usr/sbin/nologin`);
    // Recorded: another process of the same store, or a later start, finds the same user.
    expect(await new AppUsers(store).ensure(app.id)).toEqual(user);
    await store.close();
  });

  it('makes the recorded user again on a machine without it, and refuses one whose uid the machine gave another user', async () => {
    const store = await openSqliteStore(join(await tempDir(), 'store.sqlite'));
    const app = await store.createApp({ name: 'moved', org: 'acme', zone: 'par', type: 'node' });
    const user = await new AppUsers(store).ensure(app.id);
    made.push(user.name);
    await run('userdel', [user.name]);
    await run('groupdel', [user.name]).catch(() => undefined);
    expect(await id('passwd', user.name)).toBe('');
    expect(await new AppUsers(store).ensure(app.id)).toEqual(user);
    // The machine's user of that uid is another one now (made by hand): the application's code must never run as it.
    await run('userdel', [user.name]);
    await run('groupdel', [user.name]).catch(() => undefined);
    const squatter = `rpsq${process.pid}`;
    made.push(squatter);
    await run('useradd', ['--uid', String(user.uid), '--user-group', '--no-create-home', squatter]);
    await expect(new AppUsers(store).ensure(app.id)).rejects.toMatchObject({
      code: HostErrors.APP_USER_FAILED.code,
      message: expect.stringContaining(`belongs to ${squatter} on this machine`),
    });
    await store.close();
  });

  it('gives two hosts of two stores on one machine, creating at once, two different uids (the one that loses the race takes the next)', async () => {
    const stores = await Promise.all([0, 1].map(async () => openSqliteStore(join(await tempDir(), 'store.sqlite'))));
    const apps = await Promise.all(stores.map((store, i) => store.createApp({ name: `race${i}`, org: 'acme', zone: 'par', type: 'node' })));
    const users = await Promise.all(stores.map((store, i) => new AppUsers(store).ensure(apps[i]!.id)));
    made.push(...users.map((u) => u.name));
    expect(users[0]!.uid).not.toBe(users[1]!.uid);
    for (const [i, user] of users.entries()) {
      expect(await id('passwd', user.name)).toContain(`:${user.uid}:${user.uid}:runplan-host ${apps[i]!.id}:`);
      expect(await stores[i]!.appUser(apps[i]!.id)).toMatchObject({ uid: user.uid });
    }
    await Promise.all(stores.map((store) => store.close()));
  });
});
