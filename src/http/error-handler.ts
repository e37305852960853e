import type { FastifyError, FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { ApiError, errorBody, type ParamIssue } from './errors.ts';

interface AjvIssue {
  keyword: string;
  instancePath: string;
  message?: string;
  params: Record<string, unknown>;
}

const LOCATION: Record<string, ParamIssue['location']> = {
  querystring: 'query',
  params: 'path',
  body: 'body',
  headers: 'header',
};

/** Turns one schema-validation failure into an issue that names the parameter and the rule. */
export function describeValidationIssue(issue: AjvIssue, context: string | undefined): ParamIssue {
  const location = LOCATION[context ?? 'querystring'] ?? 'query';
  let parameter = issue.instancePath.replace(/^\//, '').replaceAll('/', '.');
  if (issue.keyword === 'required' && typeof issue.params.missingProperty === 'string') {
    parameter = parameter ? `${parameter}.${issue.params.missingProperty}` : issue.params.missingProperty;
  }
  if (issue.keyword === 'additionalProperties' && typeof issue.params.additionalProperty === 'string') {
    parameter = parameter
      ? `${parameter}.${issue.params.additionalProperty}`
      : issue.params.additionalProperty;
  }
  if (!parameter) parameter = location;
  let message = issue.message ?? 'is invalid';
  if (issue.keyword === 'enum' && Array.isArray(issue.params.allowedValues)) {
    message = `must be one of ${issue.params.allowedValues.join(', ')}`;
  } else if (issue.keyword === 'type' && typeof issue.params.type === 'string') {
    message = `must be ${/^[aeiou]/.test(issue.params.type) ? 'an' : 'a'} ${issue.params.type}`;
  } else if (issue.keyword === 'pattern') {
    const pattern = typeof issue.params.pattern === 'string' ? issue.params.pattern : '';
    if (pattern.includes('\\d{4}-')) message = 'must be a date (YYYY-MM-DD) or an ISO 8601 date-time';
    else if (pattern.includes(',')) message = 'must be a comma-separated list of the documented values';
    else message = 'has an invalid format';
  } else if (issue.keyword === 'required') {
    message = 'is required';
  } else if (issue.keyword === 'additionalProperties') {
    message = 'is not an allowed field';
  }
  return { parameter, location, rule: issue.keyword, message };
}

function fromFastifyError(error: FastifyError): ApiError {
  if (error.validation && error.validation.length > 0) {
    const issues = error.validation.map((v) =>
      describeValidationIssue(v as AjvIssue, error.validationContext),
    );
    const first = issues[0]!;
    const where = first.location === 'body' ? 'field' : 'parameter';
    return new ApiError(
      first.location === 'body' ? 'INVALID_BODY' : 'INVALID_PARAMS',
      `Invalid ${where} "${first.parameter}": ${first.message}`,
      {
        params: issues,
      },
    );
  }
  switch (error.code) {
    case 'FST_ERR_CTP_BODY_TOO_LARGE':
      return new ApiError('PAYLOAD_TOO_LARGE', 'Request body is too large');
    case 'FST_ERR_CTP_INVALID_MEDIA_TYPE':
      return new ApiError('UNSUPPORTED_MEDIA_TYPE', 'Unsupported Content-Type; send application/json');
    case 'FST_ERR_CTP_EMPTY_JSON_BODY':
      return new ApiError('INVALID_BODY', 'Request body is empty but Content-Type is application/json');
    case 'FST_ERR_CTP_INVALID_JSON_BODY':
      return new ApiError('INVALID_BODY', 'Request body is not valid JSON');
    default:
      break;
  }
  if (error.statusCode === 400 && error.name === 'SyntaxError') {
    return new ApiError('INVALID_BODY', 'Request body is not valid JSON');
  }
  if (error.statusCode !== undefined && error.statusCode >= 400 && error.statusCode < 500) {
    return new ApiError('INVALID_PARAMS', error.message);
  }
  return new ApiError('INTERNAL_ERROR', 'An internal error occurred; it has been logged with the request id');
}

/** Installs the single error envelope for thrown errors and unknown routes. */
export function installErrorHandling(app: FastifyInstance): void {
  app.setErrorHandler((error: FastifyError | ApiError, request: FastifyRequest, reply: FastifyReply) => {
    const apiError = error instanceof ApiError ? error : fromFastifyError(error);
    if (apiError.status >= 500) request.log.error({ err: error }, 'request failed');
    if (apiError.details?.retryAfter !== undefined)
      reply.header('Retry-After', String(apiError.details.retryAfter));
    return reply.status(apiError.status).send(errorBody(apiError, request.id));
  });
  app.setNotFoundHandler((request, reply) => {
    const apiError = new ApiError('NOT_FOUND', `No route for ${request.method} ${request.url.split('?')[0]}`);
    return reply.status(404).send(errorBody(apiError, request.id));
  });
}

/**
 * Ajv coerces "1e400" to Infinity and then accepts it as an integer within any
 * maximum; reject numeric query values that do not fit a double before schema
 * validation sees them.
 */
export async function rejectNonFiniteQueryNumbers(request: FastifyRequest): Promise<void> {
  const query = request.query as Record<string, unknown> | undefined;
  if (!query) return;
  for (const [name, value] of Object.entries(query)) {
    for (const item of Array.isArray(value) ? value : [value]) {
      if (
        typeof item === 'string' &&
        /^[+-]?(\d|\.\d)/.test(item) &&
        !Number.isFinite(Number(item)) &&
        !Number.isNaN(Number(item))
      ) {
        throw ApiError.invalidParam({ parameter: name, rule: 'type', message: 'must be a finite number' });
      }
    }
  }
}
