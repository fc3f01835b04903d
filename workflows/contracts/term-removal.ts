// The contract of the term-removal job (deleting a term or a custom taxonomy that many entries use):
// shared by the workflow, its activities and the content feature that starts it. Pure: types and strings only.

/** The workflow type; equals the function's name exported from workflows/index.ts. */
export const termRemovalWorkflowType = 'termRemovalWorkflow';

/** One job per term (or per taxonomy, `*`): a repeated deletion joins the running one. */
export const termRemovalWorkflowId = (workspaceId: string, siteId: string, taxonomy: string, termId: string | null) =>
  `term-removal:${workspaceId}:${siteId}:${taxonomy}:${termId ?? '*'}`;

/** What is removed: one term of a taxonomy, or (termId null) a whole custom taxonomy. */
export interface TermRemovalTarget {
  taxonomy: string;
  termId: string | null;
  /** For the revision notes: `tag/news` or `topic`. */
  label: string;
}

export interface TermRemovalInput extends TermRemovalTarget {
  workspaceId: string;
  siteId: string;
  /** Entries changed per activity. */
  batch: number;
  /** Carried over a continue-as-new. */
  changedSoFar?: number;
}

export interface TermRemovalOutcome {
  entriesChanged: number;
}
