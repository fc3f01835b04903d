/**
 * The vocabulary of the audit trail that operations declare and handlers note (`services/audit/`
 * writes the rows). Held in core/ because `Operation` and `OperationContext` name it.
 */

/** What a change is about: the kind of thing (`content`, `apiKeys`, `tenants`, ...) and its id. */
export interface AuditTarget {
  kind: string;
  id: string;
}

/**
 * A change, kept small: the names of the fields it touched and, for state-like fields only (status,
 * role, capabilities, quotas, ...), old → new values. Never a secret, a password, a hash or a body.
 */
export interface AuditSummary {
  fields?: string[];
  changes?: Record<string, { from?: unknown; to?: unknown }>;
  /** A short word of why, e.g. `publish date passed while suspended`. */
  note?: string;
  /** Other things the change touched, counted per kind (a term deletion rewriting entries). */
  affected?: Record<string, number>;
}

/** What an operation's definition says of its audit row (`Operation.audit`). */
export interface AuditDeclaration<I, O> {
  /** Row action; the operation id unless stated (`key.created` keeps the older rows' name). */
  action?: string;
  /** Target kind when the default target is used; the operation id's first word otherwise. */
  kind?: string;
  /** The target; default: the last path parameter, else input `id`, else the answer's `id` (or a top-level object's). */
  target?(input: I, output: O): AuditTarget | null;
  /** Extra summary merged over the default one (input field names, state-like values). */
  summary?(input: I, output: O): AuditSummary;
}

/** One change, as the write path (or any handler, workflow or activity) reports it: `recordChange`. */
export interface AuditChange {
  /** Event-like name (`content.published`, `term.deleted`) or an operation id. */
  action: string;
  target: AuditTarget;
  summary?: AuditSummary;
}

/**
 * The changes a handler (or the write path under it) reported while the runner runs its operation
 * (`recordChange` in services/audit/record.ts): folded into that operation's one row. Absent
 * outside the runner. At most `kept` of them are held; later ones are only counted per kind.
 */
export interface ChangeNotes {
  noted: AuditChange[];
  more: Record<string, number>;
}
