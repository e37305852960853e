/**
 * The `/docs` page (@fastify/swagger-ui): its title, and how it shows each
 * operation's security.
 *
 * The OpenAPI document says a public operation takes an optional credential
 * (`security: [{}, {apiKey: []}]`): right for generated clients, and what makes
 * "Try it out" send the key once the page is authorized. Swagger UI 5 hides the
 * lock only when `security` is exactly `[{}]`; any other list gets a lock whose
 * state is "some requirement is met", which the empty requirement always is —
 * so a public operation showed a closed ("authorized") lock and a keyed one an
 * open lock, before anyone authorized. The plugin below shows the page's
 * operation summaries an optional requirement as `[{}]` (no lock) and leaves
 * the document — and so the requests the page sends — as they are: a lock now
 * means "needs a key" (open until authorized, closed after). The introduction
 * says so (src/http/docs-intro.ts).
 */
import type { FastifySwaggerUiOptions } from '@fastify/swagger-ui';

/** The page's `<title>` and the heading above the introduction. */
export const DOCS_TITLE = 'Stoop API reference';

/**
 * A Swagger UI plugin, as the browser runs it: @fastify/swagger-ui writes
 * `uiConfig` functions into its initializer script with `toString()`, so the
 * source is kept as text (plain ES5, no build step between here and the page)
 * rather than as a function whose compiled form depends on the toolchain.
 */
const OPTIONAL_SECURITY_PLUGIN = `function stoopOptionalSecurity() {
  function isOptional(security) {
    return Boolean(security) && security.size > 1 && security.some(function (requirement) {
      return requirement.isEmpty();
    });
  }
  return {
    wrapComponents: {
      OperationSummary: function (Original, system) {
        return function OptionalSecuritySummary(props) {
          var security = props.operationProps && props.operationProps.get('security');
          if (!isOptional(security)) return system.React.createElement(Original, props);
          var shown = props.operationProps.set('security', security.filter(function (requirement) {
            return requirement.isEmpty();
          }).take(1));
          return system.React.createElement(Original, Object.assign({}, props, { operationProps: shown }));
        };
      }
    }
  };
}`;

/** A function that serializes as `source`; never called on the server. */
function browserFunction(source: string): () => never {
  const placeholder = (): never => {
    throw new Error('a Swagger UI plugin runs in the browser only');
  };
  placeholder.toString = () => source;
  return placeholder;
}

/** The swagger-ui registration: `/docs`, titled, locks shown as described above. */
export function docsPageOptions(): FastifySwaggerUiOptions {
  return {
    routePrefix: '/docs',
    theme: { title: DOCS_TITLE },
    uiConfig: {
      deepLinking: true,
      // No top bar (another framework's logo, a box to load other documents): the page opens with its title.
      layout: 'BaseLayout',
      // Replaces the plugin list, which by default only repeats DownloadUrl (already in the core preset).
      plugins: [browserFunction(OPTIONAL_SECURITY_PLUGIN)],
    },
    // The page's copy of the document differs from /openapi.json in two ways:
    // its title is the page's heading, and "Try it out" calls the origin the
    // page was loaded from (behind any proxy, or when PUBLIC_URL is not
    // reachable from the reader's browser), while generated clients get the
    // absolute PUBLIC_URL.
    transformSpecification: (document) =>
      withoutInboundSchemes({
        ...document,
        info: { ...(document.info as Record<string, unknown>), title: DOCS_TITLE },
        servers: [{ url: '/' }],
      }),
  };
}

type Json = Record<string, unknown>;

/**
 * The page's copy without the security schemes that describe what *we* send
 * (the webhook signature): the Authorize dialog offers the reader only the
 * credentials the API accepts. The webhook operations keep their description
 * of signing and lose only the lock.
 */
function withoutInboundSchemes(document: Json): Json {
  const components = (document.components ?? {}) as Json;
  const { apiKey } = (components.securitySchemes ?? {}) as Json;
  const webhooks = Object.fromEntries(
    Object.entries((document.webhooks ?? {}) as Record<string, Json>).map(([name, item]) => [
      name,
      Object.fromEntries(
        Object.entries(item).map(([method, operation]) => [method, { ...(operation as Json), security: [] }]),
      ),
    ]),
  );
  return {
    ...document,
    webhooks,
    components: { ...components, securitySchemes: apiKey === undefined ? {} : { apiKey } },
  };
}
