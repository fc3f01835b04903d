/**
 * The list envelopes: Management lists carry `page.nextCursor`, public lists `nextCursor` at the
 * top; `null` (or absent) means the last page.
 */
export type PagedBody = { page: { nextCursor?: string | null } } | { nextCursor?: string | null };

/** What an openapi-fetch call resolves to, success or refusal. */
export interface CallResult<T> {
  data?: T;
  error?: unknown;
  response: Response;
}

/** A refusal met while paging: the status and the `{ error }` body. */
export class ClientError extends Error {
  constructor(
    readonly status: number,
    readonly body: unknown,
  ) {
    super(`HTTP ${status}: ${typeof body === 'object' && body && 'error' in body ? String(body.error) : 'request failed'}`);
    this.name = 'ClientError';
  }
}

const nextCursorOf = (body: PagedBody): string | null | undefined => ('page' in body ? body.page.nextCursor : body.nextCursor);

/**
 * Every page of a list, following its cursor: `call` sends the request for one page given the
 * cursor (`undefined` for the first). A refusal ends the walk with a `ClientError`.
 *
 *   for await (const page of pages((cursor) => client.GET('/content', { params: { query: { cursor } } })))
 */
export async function* pages<T extends PagedBody>(call: (cursor: string | undefined) => Promise<CallResult<T>>): AsyncGenerator<T, void, undefined> {
  let cursor: string | undefined;
  do {
    const { data, error, response } = await call(cursor);
    if (data === undefined) throw new ClientError(response.status, error);
    yield data;
    cursor = nextCursorOf(data) ?? undefined;
  } while (cursor !== undefined);
}
