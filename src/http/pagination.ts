import { ApiError } from './errors.ts';

export interface PageRequest {
  page: number;
  perPage: number;
}

export interface PageLinks {
  self: string;
  first: string;
  last: string;
  prev: string | null;
  next: string | null;
}

export function lastPage(total: number, perPage: number): number {
  return Math.max(1, Math.ceil(total / perPage));
}

/**
 * Rejects a page past the end: a client paging by `next` never gets there, so
 * asking for it is a bug worth a clear 400 rather than a silent empty page.
 */
export function assertPageInRange(page: PageRequest, total: number): void {
  const last = lastPage(total, page.perPage);
  if (page.page > last) {
    throw ApiError.invalidParam({
      parameter: 'page',
      rule: 'page_range',
      message: `page ${page.page} is beyond the last page (${last}) for ${total} results at perPage=${page.perPage}`,
    });
  }
}

/**
 * Absolute links for a paginated response. The operation's declared query
 * parameters are kept as sent (in their order; each is bounded by its schema),
 * anything else is dropped — the REST validator rejects unknown parameters,
 * but links must never echo an unbounded query whoever calls this — and
 * `page` and `perPage` are set to effective values.
 */
export function pageLinks(
  baseUrl: string,
  rawUrl: string,
  page: PageRequest,
  total: number,
  knownParams: ReadonlySet<string>,
): PageLinks {
  const queryStart = rawUrl.indexOf('?');
  let path = queryStart === -1 ? rawUrl : rawUrl.slice(0, queryStart);
  // An absolute-form request target (`GET http://host/path`) must not leak its host into links.
  if (!path.startsWith('/')) path = new URL(path, 'http://placeholder').pathname;
  const sent = new URLSearchParams(queryStart === -1 ? '' : rawUrl.slice(queryStart + 1));
  const params = new URLSearchParams();
  for (const [name, value] of sent) {
    if (knownParams.has(name) && name !== 'page' && name !== 'perPage') params.append(name, value);
  }
  const kept = params.toString();
  // Built by concatenation: this runs on every list response.
  const prefix = `${baseUrl}${path}?${kept === '' ? '' : `${kept}&`}`;
  const last = lastPage(total, page.perPage);
  const at = (n: number): string => `${prefix}page=${n}&perPage=${page.perPage}`;
  return {
    self: at(page.page),
    first: at(1),
    last: at(last),
    prev: page.page > 1 ? at(Math.min(page.page - 1, last)) : null,
    next: page.page < last ? at(page.page + 1) : null,
  };
}
