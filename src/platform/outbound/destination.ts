/**
 * Vetting a caller-chosen URL before any connection is made to it (SSRF
 * defence), in two steps used at registration and again at every connection:
 *
 * 1. `checkUrl`: the URL's shape: http(s) only (plain http only when the
 *    operator allows it), no credentials, a host.
 * 2. `resolveDestination`: resolves the host and refuses it when any address
 *    it resolves to is not public (see addresses.ts), unless the operator
 *    listed the host. The vetted address is returned so the connection is
 *    made to exactly it (pinned): a second DNS answer (rebinding) is never
 *    consulted.
 */
import { lookup } from 'node:dns/promises';
import { isIP } from 'node:net';
import { nonPublicReason } from './addresses.ts';

export interface OutboundPolicy {
  /** Plain http accepted (local development); otherwise https only. */
  readonly allowHttp: boolean;
  /** Host names or IP literals let through the address check, lowercased (e.g. `127.0.0.1`, `localhost`). */
  readonly allowedHosts: readonly string[];
}

export const STRICT_OUTBOUND_POLICY: OutboundPolicy = Object.freeze({ allowHttp: false, allowedHosts: [] });

export interface ResolvedAddress {
  address: string;
  family: 4 | 6;
}

/** Host name → addresses. Injected by tests, so they never reach a real resolver. */
export type Resolver = (hostname: string) => Promise<ResolvedAddress[]>;

export const systemResolver: Resolver = async (hostname) => {
  const answers = await lookup(hostname, { all: true, verbatim: true });
  return answers.map((a) => ({ address: a.address, family: a.family === 6 ? 6 : 4 }));
};

export const MAX_URL_LENGTH = 2048;

export type UrlCheck = { ok: true; url: URL; host: string } | { ok: false; reason: string };

/** The URL's host as compared with the allowlist and resolved: lowercased, IPv6 without brackets. */
function hostOf(url: URL): string {
  const host = url.hostname.toLowerCase();
  return host.startsWith('[') && host.endsWith(']') ? host.slice(1, -1) : host;
}

/** Step 1: the URL's shape. Reasons are fit to show the caller (they name no secret). */
export function checkUrl(raw: string, policy: OutboundPolicy): UrlCheck {
  if (raw.length > MAX_URL_LENGTH)
    return { ok: false, reason: `must be at most ${MAX_URL_LENGTH} characters` };
  if (!URL.canParse(raw)) return { ok: false, reason: 'must be an absolute URL' };
  const url = new URL(raw);
  if (url.protocol !== 'https:' && !(policy.allowHttp && url.protocol === 'http:')) {
    return {
      ok: false,
      reason: policy.allowHttp ? 'must be an http or https URL' : 'must be an https URL',
    };
  }
  if (url.username !== '' || url.password !== '') {
    return { ok: false, reason: 'must not carry credentials (user:password@)' };
  }
  const host = hostOf(url);
  if (host === '') return { ok: false, reason: 'must name a host' };
  return { ok: true, url, host };
}

export type DestinationCheck =
  | { ok: true; url: URL; host: string; pinned: ResolvedAddress }
  | { ok: false; reason: string; kind: 'url' | 'address' | 'dns' };

/** Steps 1 and 2: the URL, then every address its host resolves to; the first vetted address is pinned. */
export async function resolveDestination(
  raw: string,
  policy: OutboundPolicy,
  resolver: Resolver,
): Promise<DestinationCheck> {
  const shape = checkUrl(raw, policy);
  if (!shape.ok) return { ...shape, kind: 'url' };
  const { url, host } = shape;
  const allowed = policy.allowedHosts.includes(host);
  let addresses: ResolvedAddress[];
  const literal = isIP(host);
  if (literal !== 0) {
    addresses = [{ address: host, family: literal === 6 ? 6 : 4 }];
  } else {
    try {
      addresses = await resolver(host);
    } catch {
      return { ok: false, reason: `the host ${host} could not be resolved`, kind: 'dns' };
    }
    if (addresses.length === 0) {
      return { ok: false, reason: `the host ${host} has no address`, kind: 'dns' };
    }
  }
  if (!allowed) {
    for (const { address } of addresses) {
      const refused = nonPublicReason(address);
      if (refused !== undefined) {
        const via = literal === 0 ? `the host ${host} resolves to ${address}: ` : '';
        return {
          ok: false,
          reason: `${via}${refused}; webhooks are delivered to public addresses only`,
          kind: 'address',
        };
      }
    }
  }
  return { ok: true, url, host, pinned: addresses[0]! };
}
