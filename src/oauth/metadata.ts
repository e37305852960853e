/**
 * Discovery (issue 14 part 1; SPEC "OAuth and discovery"):
 * - RFC 8414 authorization server metadata at `/.well-known/oauth-authorization-server`
 *   (issuer = the public URL), also answered at the path-inserted form
 *   `/.well-known/oauth-authorization-server/mcp` for clients that take the MCP
 *   endpoint's URL as the issuer.
 * - RFC 9728 protected resource metadata for the API (`/.well-known/oauth-protected-resource`,
 *   resource = the public URL) and for the MCP endpoint (`…/mcp`, resource =
 *   `<public URL>/mcp`). Every 401 names one of them (src/http/access.ts).
 */
import { UNMETERED_ROUTE } from '../http/access.ts';
import type { HttpApp } from '../http/server.ts';
import { AuthorizationServerMetadataSchema, ProtectedResourceMetadataSchema } from './oauth.schema.ts';
import { GRANT_TYPES, type OAuthService, SUPPORTED_SCOPES } from './oauth.service.ts';

/** Where the MCP endpoint's protected-resource metadata is served: its 401s point here. */
export const MCP_RESOURCE_METADATA_PATH = '/.well-known/oauth-protected-resource/mcp';
export const AUTHORIZATION_SERVER_METADATA_PATH = '/.well-known/oauth-authorization-server';

/** Metadata changes only with a deployment: shared caches may keep it a while. */
const CACHE = 'public, max-age=3600';

export function metadataRoutes(app: HttpApp, oauth: OAuthService): void {
  const { issuer } = oauth;
  const serverMetadata = {
    issuer,
    authorization_endpoint: `${issuer}/oauth/authorize`,
    token_endpoint: `${issuer}/oauth/token`,
    registration_endpoint: `${issuer}/oauth/register`,
    scopes_supported: [...SUPPORTED_SCOPES],
    response_types_supported: ['code'],
    response_modes_supported: ['query'],
    grant_types_supported: [...GRANT_TYPES],
    token_endpoint_auth_methods_supported: ['none'],
    code_challenge_methods_supported: ['S256'],
    authorization_response_iss_parameter_supported: true,
    service_documentation: `${issuer}/docs`,
  };
  const resourceMetadata = (resource: string, name: string) => ({
    resource,
    authorization_servers: [issuer],
    bearer_methods_supported: ['header'],
    scopes_supported: [...SUPPORTED_SCOPES],
    resource_name: name,
    resource_documentation: `${issuer}/docs`,
  });

  for (const path of [AUTHORIZATION_SERVER_METADATA_PATH, `${AUTHORIZATION_SERVER_METADATA_PATH}/mcp`]) {
    app.get(
      path,
      {
        config: { access: UNMETERED_ROUTE },
        schema: {
          operationId: path.endsWith('/mcp') ? 'getOAuthServerMetadataForMcp' : 'getOAuthServerMetadata',
          tags: ['OAuth'],
          summary: 'Authorization server metadata (RFC 8414)',
          description: path.endsWith('/mcp')
            ? 'The same document as `/.well-known/oauth-authorization-server`, for clients that derive the metadata URL from the MCP endpoint (RFC 8414 §3.1 path insertion).'
            : 'Endpoints and capabilities of the OAuth 2.1 authorization server: PKCE with S256 only, public clients, dynamic registration, `iss` in authorization responses (RFC 9207).',
          response: { 200: AuthorizationServerMetadataSchema },
        },
      },
      async (_request, reply) => {
        reply.header('Cache-Control', CACHE);
        return serverMetadata;
      },
    );
  }
  const documents: [string, string, ReturnType<typeof resourceMetadata>][] = [
    [
      '/.well-known/oauth-protected-resource',
      'getProtectedResourceMetadata',
      resourceMetadata(oauth.apiResource, 'Stoop API'),
    ],
    [
      MCP_RESOURCE_METADATA_PATH,
      'getMcpProtectedResourceMetadata',
      resourceMetadata(oauth.mcpResource, 'Stoop MCP server'),
    ],
  ];
  for (const [path, operationId, document] of documents) {
    app.get(
      path,
      {
        config: { access: UNMETERED_ROUTE },
        schema: {
          operationId,
          tags: ['OAuth'],
          summary: `Protected resource metadata (RFC 9728): ${document.resource_name}`,
          description:
            path === MCP_RESOURCE_METADATA_PATH
              ? 'For the MCP endpoint (`/mcp`): tokens for `resource=<public URL>/mcp` work there only.'
              : 'For the REST API (and, with the same token, the MCP endpoint). Named by the `WWW-Authenticate` header of every 401.',
          response: { 200: ProtectedResourceMetadataSchema },
        },
      },
      async (_request, reply) => {
        reply.header('Cache-Control', CACHE);
        return document;
      },
    );
  }
}
