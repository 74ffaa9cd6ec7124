/**
 * A strict check of Kubernetes objects: every field must exist in the API.
 *
 * kubernetes-models validates types, required fields and formats, but its
 * schemas allow any other property (as the API's OpenAPI schemas do), so a
 * misspelled field (`periodSecond`) passes — and a cluster drops it silently.
 * Its TypeScript declarations list every field, though: this walks an object
 * against them (with the TypeScript compiler, a dev dependency), so any field
 * they do not declare is reported with its path.
 */
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import ts from 'typescript';

const require = createRequire(import.meta.url);
const MODELS = dirname(require.resolve('kubernetes-models/package.json'));

/** The declaration of each kind runplan writes: file under kubernetes-models, interface name. */
const KINDS: Readonly<Record<string, { file: string; name: string }>> = {
  'apps/v1/Deployment': { file: 'apps/v1/Deployment.d.ts', name: 'IDeployment' },
  'v1/Service': { file: 'v1/Service.d.ts', name: 'IService' },
  'v1/Secret': { file: 'v1/Secret.d.ts', name: 'ISecret' },
};

export class FieldChecker {
  private readonly checker: ts.TypeChecker;
  private readonly roots = new Map<string, ts.Type>();

  constructor() {
    const files = Object.values(KINDS).map((k) => join(MODELS, k.file));
    const program = ts.createProgram(files, { strict: true, noEmit: true, skipLibCheck: true, moduleResolution: ts.ModuleResolutionKind.Node10 });
    this.checker = program.getTypeChecker();
    for (const [kind, { file, name }] of Object.entries(KINDS)) {
      const source = program.getSourceFile(join(MODELS, file));
      const moduleSymbol = source && this.checker.getSymbolAtLocation(source);
      const symbol = moduleSymbol && this.checker.getExportsOfModule(moduleSymbol).find((s) => s.name === name);
      if (!symbol) throw new Error(`kubernetes-models has no ${name} in ${file}`);
      this.roots.set(kind, this.checker.getDeclaredTypeOfSymbol(symbol));
    }
  }

  /** Paths of the fields of `object` that its kind does not declare (empty: every field exists). */
  unknownFields(object: { apiVersion: string; kind: string }): string[] {
    const root = this.roots.get(`${object.apiVersion}/${object.kind}`);
    if (!root) return [`(kind ${object.apiVersion}/${object.kind} is not covered by this check)`];
    const unknown: string[] = [];
    this.walk(object, root, object.kind, unknown);
    return unknown;
  }

  private walk(value: unknown, type: ts.Type, path: string, unknown: string[]): void {
    const t = this.checker.getNonNullableType(type);
    if (Array.isArray(value)) {
      const element = this.arrayElement(t);
      if (!element) return void unknown.push(`${path} (an array where the API has none)`);
      for (const [i, v] of value.entries()) this.walk(v, element, `${path}[${i}]`, unknown);
      return;
    }
    if (value === null || typeof value !== 'object') return;
    const objects = (t.isUnion() ? t.types : [t]).filter((c) => (c.flags & ts.TypeFlags.Object) !== 0);
    if (objects.length === 0) return void unknown.push(`${path} (an object where the API has a scalar)`);
    for (const [key, v] of Object.entries(value)) {
      const declared = objects.map((o) => o.getProperty(key)).find(Boolean);
      if (declared) {
        this.walk(v, this.checker.getTypeOfSymbol(declared), `${path}.${key}`, unknown);
        continue;
      }
      const index = objects.map((o) => o.getStringIndexType()).find(Boolean);
      if (index) this.walk(v, index, `${path}.${key}`, unknown);
      else unknown.push(`${path}.${key}`);
    }
  }

  private arrayElement(t: ts.Type): ts.Type | undefined {
    for (const c of t.isUnion() ? t.types : [t]) {
      if (this.checker.isArrayType(c)) return this.checker.getTypeArguments(c as ts.TypeReference)[0];
    }
    return undefined;
  }
}
