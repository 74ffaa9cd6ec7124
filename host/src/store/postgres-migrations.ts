/**
 * The PostgreSQL store's schema: the SQLite store's migrations (migrations.ts)
 * written again in PostgreSQL's dialect, with the same versions and names, so
 * that both stores report the same schema version for the same tables. As
 * there, a migration is never edited once released, and each runs in one
 * transaction together with its row in schema_migrations.
 *
 * Times stay the clock's ISO strings and JSON stays JSON.stringify's text (TEXT
 * columns, not timestamptz or jsonb, which would give back other values and
 * reorder keys): records read back the same from either store. The columns a
 * list is ordered by compare byte by byte (COLLATE "C"), as SQLite's do,
 * whatever the database's locale.
 */
import type { Migration } from './migrations.js';

export const postgresMigrations: readonly Migration[] = [
  {
    version: 1,
    name: 'organizations, applications, variables, SSH keys, releases',
    sql: `
      -- An organization exists once it has an application or a key; the row lets both refer to it.
      CREATE TABLE orgs (
        id         TEXT COLLATE "C" PRIMARY KEY,
        created_at TEXT NOT NULL
      );
      CREATE TABLE apps (
        id              TEXT PRIMARY KEY,
        name            TEXT COLLATE "C" NOT NULL,
        org             TEXT COLLATE "C" NOT NULL REFERENCES orgs(id),
        zone            TEXT NOT NULL CHECK (zone IN ('par', 'mtl')),
        type            TEXT NOT NULL CHECK (type IN ('node', 'ruby', 'play1')),
        created_at      TEXT NOT NULL,
        current_release INTEGER,
        UNIQUE (org, name)
      );
      CREATE TABLE variables (
        app_id     TEXT NOT NULL REFERENCES apps(id) ON DELETE CASCADE,
        name       TEXT COLLATE "C" NOT NULL,
        value      TEXT NOT NULL,
        updated_at TEXT NOT NULL,
        PRIMARY KEY (app_id, name)
      );
      CREATE TABLE ssh_keys (
        id          TEXT PRIMARY KEY,
        org         TEXT COLLATE "C" NOT NULL REFERENCES orgs(id),
        public_key  TEXT NOT NULL,
        fingerprint TEXT NOT NULL,
        comment     TEXT NOT NULL,
        added_at    TEXT COLLATE "C" NOT NULL,
        -- What SQLite's rowid gives there: the order of keys added within one millisecond.
        added_order BIGINT GENERATED ALWAYS AS IDENTITY,
        UNIQUE (org, public_key)
      );
      CREATE TABLE releases (
        app_id       TEXT NOT NULL REFERENCES apps(id) ON DELETE CASCADE,
        number       INTEGER NOT NULL CHECK (number >= 1),
        cause        TEXT NOT NULL CHECK (cause IN ('push', 'restart', 'rollback')),
        commit_sha   TEXT NOT NULL,
        requested_by TEXT NOT NULL,
        status       TEXT NOT NULL CHECK (status IN ('deploying', 'succeeded', 'failed')),
        variables    TEXT NOT NULL,
        plan         TEXT,
        plan_digest  TEXT,
        port         INTEGER,
        error_code   TEXT,
        started_at   TEXT NOT NULL,
        finished_at  TEXT,
        PRIMARY KEY (app_id, number)
      );
      -- Added once releases exists: unlike SQLite, PostgreSQL resolves a foreign key's table when it is declared.
      ALTER TABLE apps ADD FOREIGN KEY (id, current_release) REFERENCES releases(app_id, number);
    `,
  },
  {
    version: 2,
    name: 'deploy logs',
    sql: `
      CREATE TABLE release_logs (
        app_id TEXT NOT NULL,
        number INTEGER NOT NULL,
        seq    INTEGER NOT NULL,
        line   TEXT NOT NULL,
        PRIMARY KEY (app_id, number, seq),
        FOREIGN KEY (app_id, number) REFERENCES releases(app_id, number) ON DELETE CASCADE
      );
    `,
  },
  {
    version: 3,
    name: 'add-ons and their links to applications',
    sql: `
      -- config holds what the provider needs to reach and remove the add-on, its secrets included
      -- (the database is the host's alone and never printed): JSON of string values.
      CREATE TABLE addons (
        id         TEXT PRIMARY KEY,
        name       TEXT COLLATE "C" NOT NULL,
        org        TEXT COLLATE "C" NOT NULL REFERENCES orgs(id),
        provider   TEXT NOT NULL CHECK (provider IN ('postgresql', 'redis', 'storage')),
        zone       TEXT NOT NULL CHECK (zone IN ('par', 'mtl')),
        created_at TEXT NOT NULL,
        config     TEXT NOT NULL,
        UNIQUE (org, name)
      );
      -- No cascade from addons: an add-on is removed only once no application is linked to it.
      CREATE TABLE addon_links (
        app_id    TEXT NOT NULL REFERENCES apps(id) ON DELETE CASCADE,
        addon_id  TEXT NOT NULL REFERENCES addons(id),
        linked_at TEXT NOT NULL,
        PRIMARY KEY (app_id, addon_id)
      );
    `,
  },
  {
    version: 4,
    name: 'the add-ons a release was linked to',
    sql: `
      -- The names of the add-ons whose variables the release was deployed with (JSON array): shown, never replayed.
      ALTER TABLE releases ADD COLUMN links TEXT NOT NULL DEFAULT '[]';
    `,
  },
  {
    version: 5,
    name: 'links between applications, and the variables an application exposes to those linked to it',
    sql: `
      CREATE TABLE exposed_variables (
        app_id     TEXT NOT NULL REFERENCES apps(id) ON DELETE CASCADE,
        name       TEXT COLLATE "C" NOT NULL,
        value      TEXT NOT NULL,
        updated_at TEXT NOT NULL,
        PRIMARY KEY (app_id, name)
      );
      -- app_id receives the exposed variables of target_id.
      CREATE TABLE app_links (
        app_id    TEXT NOT NULL REFERENCES apps(id) ON DELETE CASCADE,
        target_id TEXT NOT NULL REFERENCES apps(id) ON DELETE CASCADE,
        linked_at TEXT NOT NULL,
        PRIMARY KEY (app_id, target_id),
        CHECK (app_id <> target_id)
      );
    `,
  },
  {
    version: 6,
    name: "an application's dedicated build instance option",
    sql: `
      -- The Information menu's option: true when its builds are sized for the host's build instance.
      ALTER TABLE apps ADD COLUMN dedicated_build_instance BOOLEAN NOT NULL DEFAULT false;
    `,
  },
  {
    version: 7,
    name: "each application's own Unix user",
    sql: `
      -- The user an application's code runs as. No foreign key to apps: the row outlives its
      -- application, so that a uid is given once and never again while files of it may exist.
      CREATE TABLE app_users (
        uid        INTEGER PRIMARY KEY CHECK (uid > 0),
        app_id     TEXT COLLATE "C" NOT NULL UNIQUE,
        name       TEXT COLLATE "C" NOT NULL UNIQUE,
        created_at TEXT NOT NULL
      );
    `,
  },
];
