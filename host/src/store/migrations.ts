/**
 * The SQLite store's schema, as an ordered list of migrations. A migration is
 * never edited once released: a change of schema is a new one at the end, so a
 * store made by any earlier version reaches the same schema. Each runs in one
 * transaction together with its row in schema_migrations.
 */

export interface Migration {
  /** 1, 2, 3…: the order they apply in; the store records each it applied. */
  readonly version: number;
  readonly name: string;
  readonly sql: string;
}

export const migrations: readonly Migration[] = [
  {
    version: 1,
    name: 'organizations, applications, variables, SSH keys, releases',
    sql: `
      -- An organization exists once it has an application or a key; the row lets both refer to it.
      CREATE TABLE orgs (
        id         TEXT PRIMARY KEY,
        created_at TEXT NOT NULL
      );
      CREATE TABLE apps (
        id              TEXT PRIMARY KEY,
        name            TEXT NOT NULL,
        org             TEXT NOT NULL REFERENCES orgs(id),
        zone            TEXT NOT NULL CHECK (zone IN ('par', 'mtl')),
        type            TEXT NOT NULL CHECK (type IN ('node', 'ruby', 'play1')),
        created_at      TEXT NOT NULL,
        current_release INTEGER,
        UNIQUE (org, name),
        FOREIGN KEY (id, current_release) REFERENCES releases(app_id, number)
      );
      CREATE TABLE variables (
        app_id     TEXT NOT NULL REFERENCES apps(id) ON DELETE CASCADE,
        name       TEXT NOT NULL,
        value      TEXT NOT NULL,
        updated_at TEXT NOT NULL,
        PRIMARY KEY (app_id, name)
      );
      CREATE TABLE ssh_keys (
        id          TEXT PRIMARY KEY,
        org         TEXT NOT NULL REFERENCES orgs(id),
        public_key  TEXT NOT NULL,
        fingerprint TEXT NOT NULL,
        comment     TEXT NOT NULL,
        added_at    TEXT NOT NULL,
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
      -- (the store is 0600 and never printed): JSON of string values.
      CREATE TABLE addons (
        id         TEXT PRIMARY KEY,
        name       TEXT NOT NULL,
        org        TEXT NOT NULL REFERENCES orgs(id),
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
        name       TEXT NOT NULL,
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
      -- The Information menu's option: 1 when its builds are sized for the host's build instance.
      ALTER TABLE apps ADD COLUMN dedicated_build_instance INTEGER NOT NULL DEFAULT 0 CHECK (dedicated_build_instance IN (0, 1));
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
        app_id     TEXT NOT NULL UNIQUE,
        name       TEXT NOT NULL UNIQUE,
        created_at TEXT NOT NULL
      );
    `,
  },
];

/** The version a store has once every migration above is applied. */
export const latestVersion = migrations[migrations.length - 1]?.version ?? 0;
