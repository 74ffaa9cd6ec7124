/**
 * The store's schema, for SQLite and PostgreSQL alike: one ordered list of
 * migrations, each written once as SQL in which what the two dialects write
 * differently comes from the `Dialect` it is given (see `Dialect` below: byte
 * ordered text, a yes/no column, the order rows were added in, a foreign key
 * to a table made later), all else the same text for both. So both stores get
 * the same tables and columns, and report the same schema version for them.
 *
 * A migration is never edited once released: a change of schema is a new one
 * at the end, so a store made by any earlier version reaches the same schema.
 * Each runs in one transaction together with its row in schema_migrations (its
 * version: what both stores record and compare).
 *
 * Times stay the clock's ISO strings and JSON stays JSON.stringify's text (TEXT
 * in both, not PostgreSQL's timestamptz or jsonb, which would give back other
 * values and reorder keys): records read back the same from either store.
 */

/**
 * What the two databases write differently in a migration's SQL. Released migrations are written with these
 * members, so what a member gives is as fixed as they are: a new need is a new member. SQLite keeps the text
 * of each CREATE TABLE (sqlite_master), so its members give what the migrations held when written for it alone,
 * line breaks and indentation included.
 */
export interface Dialect {
  /**
   * The type of a text column that lists are ordered by or names are compared in: byte by byte in both.
   * SQLite's TEXT already compares so (BINARY); PostgreSQL's follows the database's locale unless COLLATE "C".
   */
  readonly orderedText: string;
  /** A yes/no column's definition, no for rows that exist: SQLite has no boolean, and keeps 0 or 1. */
  flag(column: string): string;
  /**
   * A column numbering the rows in the order they were added (rows added in one millisecond keep it), placed
   * after the column before it: SQLite's rowid does that and needs none; PostgreSQL gets one.
   */
  insertionOrder(column: string): string;
  /**
   * A foreign key of `table` to a table made after it in the same migration (two tables that refer to each other):
   * `inTable` ends its CREATE TABLE's list, `afterTables` follows the tables. SQLite takes it in CREATE TABLE (it
   * resolves a reference when it is used, and cannot add one later); PostgreSQL resolves it when it is declared,
   * so adds it once both tables exist.
   */
  laterForeignKey(table: string, key: string): { readonly inTable: string; readonly afterTables: string };
}

export const SQLITE: Dialect = {
  orderedText: 'TEXT',
  flag: (column) => `${column} INTEGER NOT NULL DEFAULT 0 CHECK (${column} IN (0, 1))`,
  insertionOrder: () => '',
  laterForeignKey: (_table, key) => ({ inTable: `,\n        ${key}`, afterTables: '' }),
};

export const POSTGRES: Dialect = {
  orderedText: 'TEXT COLLATE "C"',
  flag: (column) => `${column} BOOLEAN NOT NULL DEFAULT false`,
  insertionOrder: (column) => `\n        ${column} BIGINT GENERATED ALWAYS AS IDENTITY,`,
  laterForeignKey: (table, key) => ({ inTable: '', afterTables: `ALTER TABLE ${table} ADD ${key};` }),
};

export interface Migration {
  /** 1, 2, 3…: the order they apply in; the store records each it applied. */
  readonly version: number;
  readonly name: string;
  /** Its SQL in `dialect`. */
  sql(dialect: Dialect): string;
}

/**
 * Where a store records each migration it applied (its version, and when): the same in both dialects, made before
 * any migration runs, and never changed, so that any version of runplan-host reads what another applied.
 */
export const SCHEMA_MIGRATIONS_TABLE = 'CREATE TABLE IF NOT EXISTS schema_migrations (version INTEGER PRIMARY KEY, applied_at TEXT NOT NULL)';

export const migrations: readonly Migration[] = [
  {
    version: 1,
    name: 'organizations, applications, variables, SSH keys, releases',
    sql: (d) => {
      // An application's current release is one of its releases, and a release is of an application.
      const currentRelease = d.laterForeignKey('apps', 'FOREIGN KEY (id, current_release) REFERENCES releases(app_id, number)');
      return `
      -- An organization exists once it has an application or a key; the row lets both refer to it.
      CREATE TABLE orgs (
        id         ${d.orderedText} PRIMARY KEY,
        created_at TEXT NOT NULL
      );
      CREATE TABLE apps (
        id              TEXT PRIMARY KEY,
        name            ${d.orderedText} NOT NULL,
        org             ${d.orderedText} NOT NULL REFERENCES orgs(id),
        zone            TEXT NOT NULL CHECK (zone IN ('par', 'mtl')),
        type            TEXT NOT NULL CHECK (type IN ('node', 'ruby', 'play1')),
        created_at      TEXT NOT NULL,
        current_release INTEGER,
        UNIQUE (org, name)${currentRelease.inTable}
      );
      CREATE TABLE variables (
        app_id     TEXT NOT NULL REFERENCES apps(id) ON DELETE CASCADE,
        name       ${d.orderedText} NOT NULL,
        value      TEXT NOT NULL,
        updated_at TEXT NOT NULL,
        PRIMARY KEY (app_id, name)
      );
      CREATE TABLE ssh_keys (
        id          TEXT PRIMARY KEY,
        org         ${d.orderedText} NOT NULL REFERENCES orgs(id),
        public_key  TEXT NOT NULL,
        fingerprint TEXT NOT NULL,
        comment     TEXT NOT NULL,
        added_at    ${d.orderedText} NOT NULL,${d.insertionOrder('added_order')}
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
      ${currentRelease.afterTables}
    `;
    },
  },
  {
    version: 2,
    name: 'deploy logs',
    sql: () => `
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
    sql: (d) => `
      -- config holds what the provider needs to reach and remove the add-on, its secrets included
      -- (the store is the host's alone, a 0600 file or its own database, and never printed): JSON of string values.
      CREATE TABLE addons (
        id         TEXT PRIMARY KEY,
        name       ${d.orderedText} NOT NULL,
        org        ${d.orderedText} NOT NULL REFERENCES orgs(id),
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
    sql: () => `
      -- The names of the add-ons whose variables the release was deployed with (JSON array): shown, never replayed.
      ALTER TABLE releases ADD COLUMN links TEXT NOT NULL DEFAULT '[]';
    `,
  },
  {
    version: 5,
    name: 'links between applications, and the variables an application exposes to those linked to it',
    sql: (d) => `
      CREATE TABLE exposed_variables (
        app_id     TEXT NOT NULL REFERENCES apps(id) ON DELETE CASCADE,
        name       ${d.orderedText} NOT NULL,
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
    sql: (d) => `
      -- The Information menu's option: on when its builds are sized for the host's build instance.
      ALTER TABLE apps ADD COLUMN ${d.flag('dedicated_build_instance')};
    `,
  },
  {
    version: 7,
    name: "each application's own Unix user",
    sql: (d) => `
      -- The user an application's code runs as. No foreign key to apps: the row outlives its
      -- application, so that a uid is given once and never again while files of it may exist.
      CREATE TABLE app_users (
        uid        INTEGER PRIMARY KEY CHECK (uid > 0),
        app_id     ${d.orderedText} NOT NULL UNIQUE,
        name       ${d.orderedText} NOT NULL UNIQUE,
        created_at TEXT NOT NULL
      );
    `,
  },
  {
    version: 8,
    name: "applications' custom domains",
    sql: (d) => `
      -- A host name the edge serves as an application's: one application has it, across the whole host.
      CREATE TABLE app_domains (
        name     ${d.orderedText} PRIMARY KEY,
        app_id   TEXT NOT NULL REFERENCES apps(id) ON DELETE CASCADE,
        added_at TEXT NOT NULL
      );
      CREATE INDEX app_domains_of_app ON app_domains (app_id);
    `,
  },
];

/** The version a store has once every migration above is applied. */
export const latestVersion = migrations[migrations.length - 1]?.version ?? 0;
