import type { FastifyError, FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { isDatabaseUnavailable } from '../platform/db/errors.ts';
import { ApiError, errorBody, type ParamIssue } from './errors.ts';
import { patternMeaning } from './schemas.ts';

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
  if (issue.keyword === 'unknown_parameter' && typeof issue.params.parameter === 'string') {
    parameter = issue.params.parameter;
  }
  if (!parameter) parameter = location;
  let message = issue.message ?? 'is invalid';
  if (issue.keyword === 'enum' && Array.isArray(issue.params.allowedValues)) {
    message = `must be one of ${issue.params.allowedValues.join(', ')}`;
  } else if (issue.keyword === 'unknown_parameter' && issue.message) {
    // The unknown-parameter rule of src/http/validation.ts words its own message (the suggestion).
    message = issue.message;
  } else if (issue.keyword === 'type' && issue.params.finite === true && issue.message) {
    // The number rule of src/http/validation.ts words its own message (it quotes what was sent).
    message = issue.message;
  } else if (issue.keyword === 'type' && typeof issue.params.type === 'string') {
    message = `must be ${/^[aeiou]/.test(issue.params.type) ? 'an' : 'a'} ${issue.params.type}`;
  } else if (issue.keyword === 'pattern') {
    // Every pattern is declared with what it accepts (PatternString); the raw regex is the fallback.
    const pattern = typeof issue.params.pattern === 'string' ? issue.params.pattern : '';
    const accepts = patternMeaning(pattern);
    message = accepts ? `must be ${accepts}` : `must match the pattern ${pattern}`;
  } else if (issue.keyword === 'required') {
    message = 'is required';
  } else if (issue.keyword === 'additionalProperties') {
    message = 'is not an allowed field';
  }
  return { parameter, location, rule: issue.keyword, message };
}

/**
 * The message of a 400 from its issues: the first one, in words. An unknown
 * parameter reads "Unknown parameter "area": did you mean "areas"?".
 */
export function validationFailureMessage(first: ParamIssue, hint?: unknown): string {
  const where = first.location === 'body' ? 'field' : 'parameter';
  if (first.rule === 'unknown_parameter' && typeof hint === 'string') {
    return `Unknown ${where} "${first.parameter}": ${hint}`;
  }
  return `Invalid ${where} "${first.parameter}": ${first.message}`;
}

/** Retry-After of a 503 for an unavailable database: a restart or failover takes seconds. */
const DATABASE_RETRY_AFTER_S = 5;

/** A rejection of the body as a whole names `body`, as a field error names its field. */
function wholeBodyError(
  code: 'INVALID_BODY' | 'PAYLOAD_TOO_LARGE' | 'UNSUPPORTED_MEDIA_TYPE',
  rule: string,
  message: string,
): ApiError {
  return new ApiError(code, `Invalid "body": ${message}`, {
    params: [{ parameter: 'body', location: 'body', rule, message }],
  });
}

function fromFastifyError(error: FastifyError): ApiError {
  if (error.validation && error.validation.length > 0) {
    const issues = error.validation.map((v) =>
      describeValidationIssue(v as AjvIssue, error.validationContext),
    );
    const first = issues[0]!;
    return new ApiError(
      first.location === 'body' ? 'INVALID_BODY' : 'INVALID_PARAMS',
      validationFailureMessage(first, (error.validation[0] as AjvIssue).params.hint),
      {
        params: issues,
      },
    );
  }
  switch (error.code) {
    case 'FST_ERR_CTP_BODY_TOO_LARGE':
      return wholeBodyError('PAYLOAD_TOO_LARGE', 'size', 'is too large');
    case 'FST_ERR_CTP_INVALID_MEDIA_TYPE':
      return wholeBodyError('UNSUPPORTED_MEDIA_TYPE', 'media_type', 'must be sent as application/json');
    case 'FST_ERR_CTP_EMPTY_JSON_BODY':
      return wholeBodyError('INVALID_BODY', 'json', 'is empty but Content-Type is application/json');
    case 'FST_ERR_CTP_INVALID_JSON_BODY':
      return wholeBodyError('INVALID_BODY', 'json', 'is not valid JSON');
    default:
      break;
  }
  if (error.statusCode === 400 && error.name === 'SyntaxError') {
    return wholeBodyError('INVALID_BODY', 'json', 'is not valid JSON');
  }
  if (error.statusCode !== undefined && error.statusCode >= 400 && error.statusCode < 500) {
    return new ApiError('INVALID_PARAMS', error.message);
  }
  // A dependency that cannot serve now is the client's cue to retry, not our bug: 503, never 500.
  if (isDatabaseUnavailable(error)) {
    return new ApiError('SERVICE_UNAVAILABLE', 'The database is unavailable; retry later', {
      retryAfter: DATABASE_RETRY_AFTER_S,
    });
  }
  return new ApiError('INTERNAL_ERROR', 'An internal error occurred; it has been logged with the request id');
}

/**
 * Installs the single error envelope for thrown errors and unknown routes;
 * `publicUrl` (PUBLIC_URL) is the origin of each error's `docs` link.
 */
export function installErrorHandling(app: FastifyInstance, publicUrl: string): void {
  app.setErrorHandler((error: FastifyError | ApiError, request: FastifyRequest, reply: FastifyReply) => {
    const apiError = error instanceof ApiError ? error : fromFastifyError(error);
    if (apiError.status >= 500) request.log.error({ err: error }, 'request failed');
    if (apiError.details?.retryAfter !== undefined)
      reply.header('Retry-After', String(apiError.details.retryAfter));
    return reply.status(apiError.status).send(errorBody(apiError, request.id, publicUrl));
  });
  app.setNotFoundHandler((request, reply) => {
    const apiError = new ApiError('NOT_FOUND', `No route for ${request.method} ${request.url.split('?')[0]}`);
    return reply.status(404).send(errorBody(apiError, request.id, publicUrl));
  });
}
