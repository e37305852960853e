/**
 * `/.well-known/mcp/server.json`: the server described in the MCP registry's
 * `server.json` format (schema 2025-12-11), so registries and clients can
 * find the remote endpoint and what it needs without reading the README.
 * Only a remote (`remotes`) is listed: there is no package to install.
 */
import { type Static, Type } from '@sinclair/typebox';
import { MCP_RESOURCE_METADATA_PATH } from '../oauth/metadata.ts';

/** Reverse-DNS name, as the registry requires (`namespace/name`). */
export const MCP_SERVER_NAME = 'dev.stoop/stoop';
export const SERVER_JSON_SCHEMA =
  'https://static.modelcontextprotocol.io/schemas/2025-12-11/server.schema.json';

export const ServerCardSchema = Type.Object(
  {
    $schema: Type.String({ description: 'The server.json schema this document follows.' }),
    name: Type.String({ description: 'Reverse-DNS server name.' }),
    title: Type.String(),
    description: Type.String(),
    version: Type.String({ description: 'The Stoop version serving it.' }),
    websiteUrl: Type.String(),
    remotes: Type.Array(
      Type.Object({
        type: Type.Literal('streamable-http'),
        url: Type.String(),
        headers: Type.Array(
          Type.Object({
            name: Type.String(),
            description: Type.String(),
            isRequired: Type.Boolean(),
            isSecret: Type.Boolean(),
          }),
        ),
      }),
    ),
    _meta: Type.Object({
      'io.modelcontextprotocol.registry/publisher-provided': Type.Object({
        authorization: Type.Object({
          type: Type.Literal('oauth2'),
          protectedResourceMetadata: Type.String(),
          bearerAlternatives: Type.String(),
        }),
        tools: Type.String(),
      }),
    }),
  },
  { description: 'An MCP registry server.json (schema 2025-12-11) describing this deployment.' },
);
export type ServerCard = Static<typeof ServerCardSchema>;

export function buildServerCard(publicUrl: string, version: string): ServerCard {
  return {
    $schema: SERVER_JSON_SCHEMA,
    name: MCP_SERVER_NAME,
    title: 'Stoop',
    // The registry caps descriptions at 100 characters.
    description: 'NYC rental and sale listings, buildings, areas and market statistics.',
    version,
    websiteUrl: publicUrl,
    remotes: [
      {
        type: 'streamable-http',
        url: `${publicUrl}/mcp`,
        headers: [
          {
            name: 'Authorization',
            description:
              'Bearer credential: a Stoop API key (`Bearer STOOP-…`) or an OAuth 2.1 access token. Clients without one discover OAuth from the 401.',
            isRequired: true,
            isSecret: true,
          },
        ],
      },
    ],
    _meta: {
      'io.modelcontextprotocol.registry/publisher-provided': {
        authorization: {
          type: 'oauth2',
          protectedResourceMetadata: `${publicUrl}${MCP_RESOURCE_METADATA_PATH}`,
          bearerAlternatives: 'An API key works as the bearer token too.',
        },
        tools:
          'Search, areas and market tools: Free tier; listing and building tools: Starter+; price history: Pro+. Each tool call counts one request against the monthly quota.',
      },
    },
  };
}
