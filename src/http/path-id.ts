import type { FastifyRequest } from 'fastify';
import { ApiError } from './errors.ts';
import { PatternString } from './schemas.ts';

/**
 * Listing and building ids are decimal digit strings (StreetEasy's and the
 * demo market's form). Checked before any lookup, so a malformed id is a 400,
 * never a query.
 */
export const RESOURCE_ID_PATTERN = '^[0-9]+$';
export const RESOURCE_ID_MAX_LENGTH = 12;
const RESOURCE_ID = new RegExp(`^[0-9]{1,${RESOURCE_ID_MAX_LENGTH}}$`);

export function isResourceId(value: string): boolean {
  return RESOURCE_ID.test(value);
}

/** A path id schema; routes check it first (`assertPathId`) so the 400 says what an id looks like. */
export function resourceIdParam(what: 'Listing' | 'Building') {
  return PatternString(RESOURCE_ID_PATTERN, `an id of 1 to ${RESOURCE_ID_MAX_LENGTH} digits`, {
    minLength: 1,
    maxLength: RESOURCE_ID_MAX_LENGTH,
    description: `${what} id: 1 to ${RESOURCE_ID_MAX_LENGTH} digits.`,
  });
}

/**
 * The 400 for a malformed listing or building id (a path parameter, or the MCP
 * tools' `id` argument): says what an id looks like and echoes a short prefix.
 */
export function invalidResourceId(what: 'Listing' | 'Building', sent: unknown): ApiError {
  const shown = typeof sent === 'string' ? ` (got "${sent.slice(0, 40)}${sent.length > 40 ? '…' : ''}")` : '';
  return ApiError.invalidParam({
    parameter: 'id',
    location: 'path',
    rule: 'pattern',
    message: `must be a ${what.toLowerCase()} id: 1 to ${RESOURCE_ID_MAX_LENGTH} digits${shown}`,
  });
}

/**
 * Checks the `id` path parameter before schema validation, so a malformed id
 * gets a 400 that says what an id looks like (the schema's pattern documents it).
 */
export function assertPathId(what: 'Listing' | 'Building') {
  return async (request: FastifyRequest): Promise<void> => {
    const id = (request.params as { id?: unknown }).id;
    if (typeof id !== 'string' || !isResourceId(id)) throw invalidResourceId(what, id);
  };
}
