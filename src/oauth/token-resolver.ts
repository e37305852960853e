import type { FastifyRequest } from 'fastify';
import type { Tier, TierLimits } from '../domain/tiers.ts';
import type { CredentialResolver } from '../http/access.ts';
import type { Caller } from '../http/caller.ts';
import { ApiError } from '../http/errors.ts';
import { accountBucket } from '../modules/keys/api-key-resolver.ts';
import { ACCESS_TOKEN_PREFIX, type OAuthService } from './oauth.service.ts';

/** Whether a request is addressed to the MCP endpoint (the only place an MCP-bound token is valid). */
function isMcpRequest(request: FastifyRequest): boolean {
  const path = request.routeOptions.url ?? request.url.split('?')[0] ?? '';
  return path === '/mcp' || path.startsWith('/mcp/');
}

/**
 * Resolves `Authorization: Bearer stoop_at_…`: an OAuth access token, as
 * stored (hashed) with its grant. The tier is the one fixed at issuance, so a
 * token keeps working until it expires even if its key is revoked (the next
 * refresh fails instead). A key-backed grant meters on its account, like the
 * key; a Free grant ("continue as Free") has no account and meters by client
 * IP like an anonymous caller, so minting grants cannot widen the Free quota.
 *
 * Audience (RFC 8707): a token bound to the public URL works on the REST API
 * and on /mcp; one bound to `<public URL>/mcp` only on /mcp.
 */
export class OAuthTokenResolver implements CredentialResolver {
  constructor(
    private readonly oauth: OAuthService,
    private readonly tierLimits: Readonly<Record<Tier, TierLimits>>,
  ) {}

  async resolve(token: string, request: FastifyRequest): Promise<Caller | ApiError> {
    const row = await this.oauth.accessToken(token);
    if (row === 'expired') return new ApiError('INVALID_API_KEY', 'The access token has expired; refresh it');
    if (row === 'invalid') {
      return new ApiError('INVALID_API_KEY', 'The access token is not valid (unknown or revoked)');
    }
    if (row.resource === this.oauth.mcpResource && !isMcpRequest(request)) {
      return new ApiError(
        'INVALID_API_KEY',
        `The access token was issued for ${this.oauth.mcpResource} only; authorize with resource=${this.oauth.apiResource} to call the REST API`,
      );
    }
    return {
      kind: 'oauth',
      tier: row.tier,
      accountId: row.account_id,
      bucket: row.account_id === null ? `ip:${request.ip}` : accountBucket(row.account_id),
      maxPerPage: this.tierLimits[row.tier].maxPerPage,
      ...(row.key_id !== null ? { keyId: row.key_id } : {}),
      grantId: row.grant_id,
    };
  }
}

/** Routes a bearer credential by its shape: OAuth access tokens by prefix, everything else as an API key. */
export class BearerResolver implements CredentialResolver {
  constructor(
    private readonly apiKeys: CredentialResolver,
    private readonly accessTokens: CredentialResolver,
  ) {}

  resolve(token: string, request: FastifyRequest): Promise<Caller | ApiError> {
    return token.startsWith(ACCESS_TOKEN_PREFIX)
      ? this.accessTokens.resolve(token, request)
      : this.apiKeys.resolve(token, request);
  }
}
