/**
 * Method and path patterns (`/apps/:app/env`) to handlers: the API's and the
 * console's. A `:name` matches one path segment, given back decoded.
 */
export class Routes<H> {
  private readonly list: { method: string; pattern: RegExp; keys: string[]; handler: H }[] = [];

  add(method: string, path: string, handler: H): void {
    const keys: string[] = [];
    const pattern = new RegExp(
      `^${path.replace(/:([a-z]+)/g, (_m, k: string) => {
        keys.push(k);
        return '([^/]+)';
      })}$`,
    );
    this.list.push({ method, pattern, keys, handler });
  }

  /** The first route of `method` whose pattern matches `pathname`, and its parameters. */
  find(method: string | undefined, pathname: string): { handler: H; params: Record<string, string> } | undefined {
    for (const route of this.list) {
      const m = route.method === method ? route.pattern.exec(pathname) : null;
      if (m) return { handler: route.handler, params: Object.fromEntries(route.keys.map((k, i) => [k, decodeURIComponent(m[i + 1] as string)])) };
    }
    return undefined;
  }
}
