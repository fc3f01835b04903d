/**
 * Typed domain errors. Handlers throw these; the one HTTP error handler (and the MCP adapter)
 * turn them into `{ error }` with the status below. Anything else becomes a 500 that leaks nothing.
 */
export class AppError extends Error {
  constructor(
    readonly status: number,
    message: string,
    readonly headers: Record<string, string> = {},
  ) {
    super(message);
    this.name = new.target.name;
  }
}

export class BadRequestError extends AppError {
  constructor(message = 'Bad request') {
    super(400, message);
  }
}

/** Always the same text, whatever the reason: the answer must not reveal why access failed. */
export class UnauthorizedError extends AppError {
  constructor() {
    super(401, 'Unauthorized');
  }
}

export class ForbiddenError extends AppError {
  constructor() {
    super(403, 'Forbidden');
  }
}

export class NotFoundError extends AppError {
  constructor(message = 'Not found') {
    super(404, message);
  }
}

export class ConflictError extends AppError {
  constructor(message = 'Conflict') {
    super(409, message);
  }
}

export class PayloadTooLargeError extends AppError {
  constructor(message = 'Payload too large') {
    super(413, message);
  }
}

export class UnsupportedMediaTypeError extends AppError {
  constructor(message = 'Unsupported content type') {
    super(415, message);
  }
}

export class TooManyRequestsError extends AppError {
  constructor(retryAfterSeconds: number) {
    super(429, 'Too many requests', { 'retry-after': String(Math.max(1, Math.ceil(retryAfterSeconds))) });
  }
}

/** A platform quota refused the call (403 counts, 413 sizes, 429 rates); the text names the quota. */
export class QuotaExceededError extends AppError {
  constructor(
    readonly quota: string,
    status: 403 | 413 | 429 = 403,
    retryAfterSeconds?: number,
  ) {
    super(status, `Quota exceeded: ${quota}`, retryAfterSeconds ? { 'retry-after': String(Math.max(1, Math.ceil(retryAfterSeconds))) } : {});
  }
}

/** A feature switched off for the workspace or site by a platform operator. */
export class FeatureDisabledError extends AppError {
  constructor(feature: string) {
    super(403, `Feature switched off: ${feature}`);
  }
}

export class BadGatewayError extends AppError {
  constructor(message = 'Bad gateway') {
    super(502, message);
  }
}

export class ServiceUnavailableError extends AppError {
  constructor(message = 'Service unavailable') {
    super(503, message);
  }
}

/**
 * An engine (MongoDB, Temporal) could not be reached within ENGINE_WAIT_MS (docs/production.md,
 * "Degrade, never hang"): the caller may try again after about that long.
 */
export class EngineUnavailableError extends AppError {
  constructor(
    readonly engine: 'database' | 'temporal',
    waitMs: number,
  ) {
    super(503, engine === 'database' ? 'Database unavailable, try again later' : 'Workflow engine unavailable, try again later', {
      'retry-after': String(Math.max(1, Math.ceil(waitMs / 1000))),
    });
  }
}

/** A change asked of a workspace while a backup holds its writes (reads are served; docs/backups.md). */
export class WorkspaceWritesHeldError extends AppError {
  constructor() {
    super(423, 'Workspace writes paused for a backup', { 'retry-after': '5' });
  }
}

/** A change asked of a workspace while its move switches clusters (a few seconds; docs/placement.md). */
export class WorkspaceMovingError extends AppError {
  constructor() {
    super(423, 'Workspace writes paused for a move', { 'retry-after': '2' });
  }
}

/** Every non-public surface of a suspended workspace (its public API answers 404). */
export class WorkspaceSuspendedError extends AppError {
  constructor() {
    super(423, 'Workspace suspended');
  }
}
