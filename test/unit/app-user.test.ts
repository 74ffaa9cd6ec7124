import { describe, expect, it } from 'vitest';
import { appUserName, appUserPath, parsePasswdEntry, spawnIdentity, userEnvironment, type AppUser } from '../../src/process/app-user.js';
import { CoreErrors } from '../../src/errors/core-errors.js';

const dedicated: AppUser = { name: 'runplan', uid: 999, gid: 995, dropped: true };
const invoking: AppUser = { name: 'dev', uid: 1000, gid: 1000, dropped: false };

describe('the unprivileged user', () => {
  it('reads a passwd entry, and nothing that is not one', () => {
    expect(parsePasswdEntry('runplan:x:999:995:runplan applications:/nonexistent:/usr/sbin/nologin\n')).toEqual({ name: 'runplan', uid: 999, gid: 995 });
    expect(parsePasswdEntry('')).toBeUndefined();
    expect(parsePasswdEntry('runplan:x:abc:995::/:/bin/sh')).toBeUndefined();
    expect(parsePasswdEntry('runplan:x:999')).toBeUndefined();
  });

  it('is runplan unless RUNPLAN_APP_USER names another; a name that could become an option is refused', () => {
    expect(appUserName({})).toBe('runplan');
    expect(appUserName({ RUNPLAN_APP_USER: ' app-1 ' })).toBe('app-1');
    for (const bad of ['--help', 'Root', 'a b', 'x'.repeat(40), 'a:b']) {
      expect(() => appUserName({ RUNPLAN_APP_USER: bad }), bad).toThrow(expect.objectContaining({ code: CoreErrors.HOST_APP_USER.code, variable: 'RUNPLAN_APP_USER' }));
    }
  });

  it('gives processes its uid, gid and a private HOME only when runplan runs as root', () => {
    expect(spawnIdentity(dedicated)).toEqual({ uid: 999, gid: 995 });
    expect(userEnvironment(dedicated, '/w/tmp/build-1', {})).toEqual({
      HOME: '/w/tmp/build-1',
      USER: 'runplan',
      LOGNAME: 'runplan',
      PATH: '/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin',
    });
    // Not root: the processes are the invoking user's, with its own HOME (the weaker isolation of docs/security.md).
    expect(spawnIdentity(invoking)).toEqual({});
    expect(userEnvironment(invoking, '/w/tmp/build-1')).toEqual({});
    expect(spawnIdentity(undefined)).toEqual({});
  });
});

describe("the unprivileged user's PATH", () => {
  it("is the system's folders, nothing of the invoking user's PATH", () => {
    const env = { PATH: '/root/.cargo/bin:/root/.pyenv/shims:/usr/bin:/bin' };
    expect(appUserPath(env)).toBe('/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin');
    expect(userEnvironment(dedicated, '/w/tmp/run-1', env).PATH).not.toContain('/root');
  });

  it('adds the folders the host names in RUNPLAN_APP_PATH first, each once', () => {
    expect(appUserPath({ RUNPLAN_APP_PATH: '/opt/tools/bin:/usr/bin' })).toBe('/opt/tools/bin:/usr/bin:/usr/local/sbin:/usr/local/bin:/usr/sbin:/sbin:/bin');
    expect(appUserPath({ RUNPLAN_APP_PATH: ' ' })).toBe('/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin');
  });

  it('refuses a RUNPLAN_APP_PATH folder that is not absolute, naming the variable', () => {
    for (const bad of ['bin', '/opt/bin::/usr/bin', '/opt/a\nb']) {
      expect(() => appUserPath({ RUNPLAN_APP_PATH: bad }), bad).toThrow(expect.objectContaining({ code: CoreErrors.HOST_INVALID_SETTING.code, variable: 'RUNPLAN_APP_PATH' }));
    }
  });
});
