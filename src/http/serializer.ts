import fastJsonStringify from 'fast-json-stringify';

/** A JSON Schema as the serializer reads it: plain objects and arrays. */
type SchemaNode = { [keyword: string]: unknown };

/** Types fast-json-stringify serializes in a `type` list, choosing by a `typeof` test. */
const LISTABLE_TYPES = new Set(['string', 'number', 'integer', 'boolean', 'object', 'array']);
/** Keywords whose values are data (which may look like schemas), never rewritten. */
const DATA_KEYWORDS = new Set(['const', 'enum', 'default', 'examples', 'example']);

function isNode(value: unknown): value is SchemaNode {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/** A branch of a union that states one type and no alternatives of its own. */
function singleTyped(branch: unknown): branch is SchemaNode & { type: string } {
  return (
    isNode(branch) &&
    typeof branch.type === 'string' &&
    branch.anyOf === undefined &&
    branch.oneOf === undefined &&
    branch.allOf === undefined &&
    branch.$ref === undefined
  );
}

const isNullBranch = (branch: unknown) => singleTyped(branch) && branch.type === 'null';
/** A branch that admits one string: `const` (TypeBox's literal) or a one-value `enum` (the OpenAPI form of it). */
function stringConstant(branch: unknown): string | undefined {
  if (!isNode(branch)) return undefined;
  const value = Array.isArray(branch.enum) && branch.enum.length === 1 ? branch.enum[0] : branch.const;
  const plain = Object.keys(branch).every((keyword) => CONSTANT_KEYWORDS.has(keyword));
  return plain && typeof value === 'string' ? value : undefined;
}
const CONSTANT_KEYWORDS = new Set(['const', 'enum', 'type', 'description']);

/**
 * The same schema with the unions fast-json-stringify can decide by a
 * `typeof` test written that way: `anyOf [T, null]` becomes
 * `type: [T, "null"]`, and a union of string constants a string `enum`. For
 * an `anyOf` it runs a compiled JSON Schema validator on the value, branch by
 * branch, at every response — for each nullable field of each item of a
 * page. The JSON written is the same (each branch is serialized as before;
 * test/http.serializer.test.ts compares every documented example). Measured
 * on `GET /v1/areas` under load: 28 → 20 µs to serialize a page. A value of a
 * type its schema does not allow still throws; a string in such a field is
 * no longer checked against its `format` (no field outside a union ever was).
 * Unions of several object or array shapes keep their validator.
 *
 * Only the serializer gets this form: the OpenAPI document keeps `anyOf`,
 * which generated clients read best, and request validation never sees it.
 */
export function serializerSchema(schema: unknown): unknown {
  if (Array.isArray(schema)) return schema.map(serializerSchema);
  if (!isNode(schema)) return schema;
  const out: SchemaNode = {};
  for (const [keyword, value] of Object.entries(schema)) {
    out[keyword] = DATA_KEYWORDS.has(keyword) ? value : serializerSchema(value);
  }
  const union = out.anyOf;
  if (!Array.isArray(union) || union.length < 2) return out;
  const { anyOf: _union, ...siblings } = out;
  const constants = union.map(stringConstant);
  if (constants.every((value) => value !== undefined))
    return { ...siblings, type: 'string', enum: constants };
  if (union.length === 2 && union.some(isNullBranch)) {
    const other = union.find((branch) => !isNullBranch(branch));
    if (singleTyped(other) && LISTABLE_TYPES.has(other.type) && !keywordsClash(siblings, other)) {
      // A union with another union above it is still decided by validating this schema: a
      // closed set of values must then admit null too (other keywords pass null by type).
      const { const: constant, enum: values, ...branch } = other;
      const closedSet = Array.isArray(values) ? values : constant !== undefined ? [constant] : null;
      return {
        ...siblings,
        ...branch,
        type: [other.type, 'null'],
        ...(closedSet ? { enum: [...closedSet, null] } : {}),
      };
    }
  }
  return out;
}

/** True when the union's own keywords and its branch's would overwrite each other when merged. */
function keywordsClash(siblings: SchemaNode, branch: SchemaNode): boolean {
  return Object.keys(branch).some((keyword) => keyword !== 'description' && keyword in siblings);
}

/**
 * The entries of `shared` that `root` refers to by `$ref` (an id, with or
 * without a fragment), directly or through each other; `rootId`, the root's
 * own id, is not among them. Undefined when there are none.
 */
function referencedSchemas(
  root: unknown,
  shared: Readonly<Record<string, unknown>>,
  rootId: unknown,
): Record<string, unknown> | undefined {
  const found: Record<string, unknown> = {};
  const pending: unknown[] = [root];
  while (pending.length > 0) {
    const value = pending.pop();
    if (Array.isArray(value)) {
      pending.push(...value);
      continue;
    }
    if (!isNode(value)) continue;
    for (const [keyword, child] of Object.entries(value)) {
      if (keyword === '$ref' && typeof child === 'string') {
        const id = child.split('#')[0] as string;
        if (id !== '' && id !== rootId && id in shared && !(id in found)) {
          found[id] = shared[id];
          pending.push(shared[id]);
        }
      } else if (typeof child === 'object' && child !== null) pending.push(child);
    }
  }
  return Object.keys(found).length > 0 ? found : undefined;
}

type Serialize = (data: unknown) => string;
/** fast-json-stringify's build, as called here (its declared overloads are by schema shape). */
const buildSerializer = fastJsonStringify as unknown as (
  schema: unknown,
  options: Record<string, unknown>,
) => Serialize;

/**
 * Serializers already built in this process, by the route schema object, then
 * by what else went into the build (options, and which object each referenced
 * shared schema was). Building them was most of an app's start (about 0.2 s of
 * CPU for the routes' responses); a process that builds the app again over the
 * same schema objects (the test harness builds one per test file, vitest runs
 * many files in one process) reuses them. fast-json-stringify's functions are
 * pure: the same schemas and options give the same serializer.
 */
const builtSerializers = new WeakMap<object, Map<string, Serialize>>();
/** The serializer forms of schema objects (`serializerSchema` is pure, and schemas are not mutated). */
const serializerForms = new WeakMap<object, unknown>();
/** A number per schema object, for keys that say which objects a build read. */
const schemaObjectIds = new WeakMap<object, number>();
let lastSchemaObjectId = 0;

function serializerFormOf(schema: unknown): unknown {
  if (!isNode(schema)) return serializerSchema(schema);
  let form = serializerForms.get(schema);
  if (form === undefined) {
    form = serializerSchema(schema);
    serializerForms.set(schema, form);
  }
  return form;
}

function schemaObjectId(schema: object): number {
  let id = schemaObjectIds.get(schema);
  if (id === undefined) {
    id = ++lastSchemaObjectId;
    schemaObjectIds.set(schema, id);
  }
  return id;
}

/**
 * The HTTP server's response serializer factory
 * (`schemaController.compilersFactory.buildSerializer`): fast-json-stringify,
 * as Fastify's own factory calls it, over `serializerSchema` forms of the
 * route's response schema and of the shared schemas it refers to.
 */
export function buildResponseSerializer(
  externalSchemas?: unknown,
  serializerOptions?: object,
): (route: { schema?: unknown }) => Serialize {
  const originals: Readonly<Record<string, unknown>> = isNode(externalSchemas) ? externalSchemas : {};
  const shared = isNode(externalSchemas)
    ? Object.fromEntries(
        Object.entries(externalSchemas).map(([id, schema]) => [id, serializerFormOf(schema)]),
      )
    : undefined;
  const optionsKey = JSON.stringify(serializerOptions ?? {});
  return ({ schema }) => {
    const own = serializerFormOf(schema);
    // As Fastify's factory: a route schema that is itself a shared one is not given twice.
    const ownId = isNode(own) ? own.$id : undefined;
    // Only the shared schemas this one refers to, directly or through others:
    // fast-json-stringify checks each schema it is given against the JSON
    // Schema meta-schema on every build, and all of them for each of the
    // routes' responses held the starting node's event loop for 2–3 s (a
    // kept-alive client polling its health meanwhile was reset). A schema
    // nothing refers to cannot change what a serializer writes.
    const others = shared ? referencedSchemas(own, shared, ownId) : undefined;
    const build = () => buildSerializer(own, { ...serializerOptions, ...(others ? { schema: others } : {}) });
    if (!isNode(schema)) return build();
    const key = `${optionsKey}|${Object.keys(others ?? {})
      .sort()
      .map((id) => {
        const original = originals[id];
        return `${id}=${isNode(original) ? schemaObjectId(original) : 'none'}`;
      })
      .join(',')}`;
    let builds = builtSerializers.get(schema);
    if (builds === undefined) {
      builds = new Map();
      builtSerializers.set(schema, builds);
    }
    let serialize = builds.get(key);
    if (serialize === undefined) {
      serialize = build();
      builds.set(key, serialize);
    }
    return serialize;
  };
}
