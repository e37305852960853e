import type { TSchema } from '@sinclair/typebox';
import { Ajv, type ValidateFunction } from 'ajv';
import addFormats from 'ajv-formats';
import { COMPONENT_SCHEMAS } from '../../src/app.ts';

const ajv = new Ajv({ strict: false, allErrors: true });
addFormats.default(ajv);
for (const schema of COMPONENT_SCHEMAS) ajv.addSchema(schema);

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
