import { describe, expect, it } from 'vitest';
import { appName, dnsLabel } from '../../src/engines/app-name.js';

describe("an application's name in an engine", () => {
  it("is its directory's name as a DNS label", () => {
    expect(appName('/x/fixtures/node/express')).toBe('express');
    expect(appName('/x/My_App.v2')).toBe('my-app-v2');
    expect(appName('relative/dir/')).toBe('dir');
  });

  it("is its folder's name when APP_FOLDER names one: two folders of one repository are two applications", () => {
    expect(appName('/x/monorepo', 'apps/api')).toBe('api');
    expect(appName('/x/monorepo', 'apps/web')).toBe('web');
    expect(appName('/x/monorepo', '')).toBe('monorepo');
  });

  it('starts with a letter, keeps a leading digit behind "app-", and is never empty', () => {
    expect(dnsLabel('2048')).toBe('app-2048');
    expect(dnsLabel('-_-')).toBe('app');
    expect(dnsLabel('')).toBe('app');
    expect(dnsLabel('Émile & Co')).toBe('mile-co');
  });

  it('is at most 40 characters and never ends with "-"', () => {
    const long = dnsLabel(`${'a'.repeat(39)}-b`);
    expect(long).toBe('a'.repeat(39));
    expect(dnsLabel('z'.repeat(100))).toHaveLength(40);
  });
});
