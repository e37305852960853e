import fastJsonStringify from 'fast-json-stringify';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { COMPONENT_SCHEMAS } from '../src/app.ts';
import { buildResponseSerializer, serializerSchema } from '../src/http/serializer.ts';
import { createTestApp, okJson, type TestApp } from './support/app.ts';

type Json = Record<string, unknown>;
type Serialize = (value: unknown) => string;
interface Media {
  schema?: Json;
  examples?: { demo?: { value: unknown } };
}
interface Document {
  paths: Record<
    string,
    Record<string, { operationId: string; responses: Record<string, { content?: Record<string, Media> }> }>
  >;
  components: { schemas: Record<string, Json>; examples: Record<string, { value: unknown }> };
}

/** fast-json-stringify as Fastify's own serializer factory calls it: the schema as declared. */
const plainSerializer = fastJsonStringify as unknown as (schema: unknown, options: object) => Serialize;

/** The document's schemas with `#/components/schemas/X` references as the serializer resolves them (by `$id`). */
function byId(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(byId);
  if (value === null || typeof value !== 'object') return value;
  return Object.fromEntries(
    Object.entries(value).map(([keyword, inner]) => [
      keyword,
      keyword === '$ref' && typeof inner === 'string'
        ? inner.replace('#/components/schemas/', '')
        : byId(inner),
    ]),
  );
}

let t: TestApp;
let doc: Document;
let shared: Record<string, Json>;
/** The shared schemas the HTTP server is given (by `$id`): the form the serializer really compiles. */
const declared = Object.fromEntries(COMPONENT_SCHEMAS.map((schema) => [schema.$id, schema])) as Record<
  string,
  Json
>;
beforeAll(async () => {
  t = await createTestApp({ scale: 0 });
  doc = await okJson<Document>(t, '/openapi.json');
  shared = Object.fromEntries(
    Object.entries(doc.components.schemas).map(([name, schema]) => [
      name,
      { ...(byId(schema) as Json), $id: name },
    ]),
  );
});
afterAll(async () => {
  await t?.close();
});

describe('serializerSchema', () => {
  it('turns a nullable scalar into a type list, keeping its keywords', () => {
    const schema = {
      anyOf: [{ type: 'string', format: 'date-time' }, { type: 'null' }],
      description: 'When',
    };
    expect(serializerSchema(schema)).toEqual({
      type: ['string', 'null'],
      format: 'date-time',
      description: 'When',
    });
  });

  it('turns a nullable object or array into a type list', () => {
    const object = { type: 'object', properties: { latitude: { type: 'number' } }, required: ['latitude'] };
    expect(serializerSchema({ anyOf: [object, { type: 'null' }] })).toEqual({
      ...object,
      type: ['object', 'null'],
    });
    const array = { type: 'array', items: { type: 'integer' } };
    expect(serializerSchema({ anyOf: [{ type: 'null' }, array] })).toEqual({
      ...array,
      type: ['array', 'null'],
    });
  });

  it('keeps null among the values of a nullable closed set (a union above it validates this one)', () => {
    const values = { anyOf: [{ type: 'string', enum: ['CONDO', 'COOP'] }, { type: 'null' }] };
    expect(serializerSchema(values)).toEqual({ type: ['string', 'null'], enum: ['CONDO', 'COOP', null] });
    const constant = { anyOf: [{ type: 'string', const: 'sale' }, { type: 'null' }] };
    expect(serializerSchema(constant)).toEqual({ type: ['string', 'null'], enum: ['sale', null] });
  });

  it('turns a union of string constants into a string enum', () => {
    const union = {
      anyOf: [
        { const: 'cached', type: 'string' },
        { const: 'live', type: 'string' },
      ],
    };
    expect(serializerSchema(union)).toEqual({ type: 'string', enum: ['cached', 'live'] });
    // As the OpenAPI document writes a literal.
    const documented = {
      anyOf: [
        { type: 'string', enum: ['cached'] },
        { type: 'string', enum: ['live'] },
      ],
    };
    expect(serializerSchema(documented)).toEqual({ type: 'string', enum: ['cached', 'live'] });
    const notOnlyConstants = {
      anyOf: [
        { const: 'cached', type: 'string' },
        { type: 'string', maxLength: 3 },
      ],
    };
    expect(serializerSchema(notOnlyConstants)).toEqual(notOnlyConstants);
  });

  it('rewrites unions at any depth, and leaves the ones it cannot decide by type', () => {
    const ref = { anyOf: [{ $ref: 'AreaRef' }, { type: 'null' }] };
    const mixed = { anyOf: [{ type: 'string' }, { type: 'number' }, { type: 'null' }] };
    const nested = { anyOf: [{ anyOf: [{ type: 'string' }, { type: 'integer' }] }, { type: 'null' }] };
    const schema = {
      type: 'object',
      properties: {
        ref,
        mixed,
        nested,
        items: { type: 'array', items: { anyOf: [{ type: 'integer' }, { type: 'null' }] } },
      },
    };
    expect(serializerSchema(schema)).toEqual({
      type: 'object',
      properties: { ref, mixed, nested, items: { type: 'array', items: { type: ['integer', 'null'] } } },
    });
  });

  it('does not read data keywords as schemas, nor change the schema it is given', () => {
    const constant = { const: { anyOf: [{ type: 'string' }, { type: 'null' }] } };
    const enumerated = { enum: [{ anyOf: [{ type: 'string' }, { type: 'null' }] }] };
    const original = JSON.stringify({ constant, enumerated });
    expect(serializerSchema({ constant, enumerated })).toEqual({ constant, enumerated });
    expect(JSON.stringify({ constant, enumerated })).toBe(original);
  });

  it('keeps a union whose own keywords its branch would overwrite', () => {
    const clash = { anyOf: [{ type: 'string', minLength: 2 }, { type: 'null' }], minLength: 3 };
    expect(serializerSchema(clash)).toEqual(clash);
  });
});

describe('buildResponseSerializer', () => {
  it.each([
    ['as declared in the source (TypeBox)', () => declared],
    ['as the OpenAPI document writes them', () => shared],
  ])(
    'writes every documented example exactly as fast-json-stringify over the declared schema does, shared schemas %s',
    (_, schemas) => {
      const shared = schemas();
      const ours = buildResponseSerializer(shared);
      let compared = 0;
      let nulls = 0;
      for (const methods of Object.values(doc.paths)) {
        for (const operation of Object.values(methods)) {
          for (const response of Object.values(operation.responses)) {
            const media = response.content?.['application/json'];
            const value = media?.examples?.demo?.value;
            if (!media?.schema || value === undefined) continue;
            const schema = byId(media.schema);
            const expected = plainSerializer(schema, { schema: shared })(value);
            let written: string;
            try {
              written = ours({ schema })(value);
            } catch (error) {
              throw new Error(`${operation.operationId}: ${String(error)} ${JSON.stringify(schema)}`);
            }
            expect(written, operation.operationId).toBe(expected);
            nulls += (expected.match(/:null/g) ?? []).length;
            compared++;
          }
        }
      }
      expect(compared).toBeGreaterThan(40);
      // The examples reach the rewritten branches: null values of nullable fields among them.
      expect(nulls).toBeGreaterThan(20);
    },
  );

  it('writes every error example as the declared error schema does', () => {
    const ours = buildResponseSerializer(shared);
    const schema = { $ref: 'ErrorEnvelope' };
    const plain = plainSerializer(schema, { schema: shared });
    const mine = ours({ schema });
    const examples = Object.values(doc.components.examples);
    expect(examples.length).toBeGreaterThan(5);
    for (const { value } of examples) expect(mine(value)).toBe(plain(value));
  });

  it('reuses a serializer built for the same schema objects and options, and only then', () => {
    const Price = { $id: 'Price', type: 'object', properties: { amount: { type: 'integer' } } };
    const route = { type: 'object', properties: { price: { $ref: 'Price' } } };
    const first = buildResponseSerializer({ Price })({ schema: route });
    // Another app over the same objects (the harness builds one per test file in one process).
    expect(buildResponseSerializer({ Price })({ schema: route })).toBe(first);
    // The same id naming another object: a serializer of its own, which writes that object's fields.
    const Renamed = { $id: 'Price', type: 'object', properties: { cents: { type: 'integer' } } };
    const other = buildResponseSerializer({ Price: Renamed })({ schema: route });
    expect(other).not.toBe(first);
    expect(other({ price: { amount: 5, cents: 500 } })).toBe('{"price":{"cents":500}}');
    expect(first({ price: { amount: 5, cents: 500 } })).toBe('{"price":{"amount":5}}');
    // Other serializer options, another build.
    expect(buildResponseSerializer({ Price }, { rounding: 'floor' })({ schema: route })).not.toBe(first);
  });

  it('still refuses a value of a type its schema does not allow', () => {
    const ours = buildResponseSerializer({});
    const serialize = ours({
      schema: { type: 'object', properties: { at: { anyOf: [{ type: 'integer' }, { type: 'null' }] } } },
    });
    expect(serialize({ at: 3 })).toBe('{"at":3}');
    expect(serialize({ at: null })).toBe('{"at":null}');
    expect(() => serialize({ at: { not: 'a number' } })).toThrow(TypeError);
  });
});
