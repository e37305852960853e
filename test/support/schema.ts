import type { TSchema } from '@sinclair/typebox';
import { Ajv, type ValidateFunction } from 'ajv';
import addFormats from 'ajv-formats';
import { SHARED_SCHEMAS } from '../../src/http/schemas.ts';
import { AreaRefSchema, AreaSchema } from '../../src/modules/areas/areas.schema.ts';
import { MARKET_SCHEMAS } from '../../src/modules/market/market.schema.ts';
import { SEARCH_SCHEMAS } from '../../src/modules/search/search.schema.ts';
import { UsageSchema } from '../../src/modules/usage/usage.routes.ts';

const ajv = new Ajv({ strict: false, allErrors: true });
addFormats.default(ajv);
for (const schema of [
  ...SHARED_SCHEMAS,
  AreaRefSchema,
  AreaSchema,
  ...SEARCH_SCHEMAS,
  ...MARKET_SCHEMAS,
  UsageSchema,
]) {
  ajv.addSchema(schema);
}

const compiled = new Map<TSchema, ValidateFunction>();

/**
 * Asserts that a response body conforms to its operation's response schema —
 * the same TypeBox schema the OpenAPI document publishes. Needed wherever a
 * route sends pre-serialized JSON instead of going through the serializer.
 */
export function expectSchema(schema: TSchema, body: unknown): void {
  let validate = compiled.get(schema);
  if (!validate) {
    validate = ajv.compile(schema);
    compiled.set(schema, validate);
  }
  if (!validate(body)) {
    throw new Error(`Response does not match its schema: ${ajv.errorsText(validate.errors)}`);
  }
}
