// The contract of the content import job (a stored NDJSON file imported in batches): shared by the
// workflow, its activities and the content feature that starts it. Pure: types and strings only.

/** The workflow type; equals the function's name exported from workflows/index.ts. */
export const contentImportWorkflowType = 'contentImportWorkflow';

/** One job per import. */
export const contentImportWorkflowId = (workspaceId: string, siteId: string, importId: string) => `content-import:${workspaceId}:${siteId}:${importId}`;

export interface ContentImportInput {
  workspaceId: string;
  siteId: string;
  importId: string;
  /** Lines per batch (one checkpoint; an activity runs batches for up to 20 s, activities/content-import.ts). */
  batch: number;
}

export interface ContentImportOutcome {
  /** `succeeded`, `cancelled` or `failed`, as the import's document says. */
  state: string;
}
