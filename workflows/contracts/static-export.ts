// Names of the export workflow's signal and query. Pure (no imports): the workflow defines them
// from these and the gateway signals and queries by them without loading workflow code.
export const REQUEST_EXPORT_SIGNAL = 'requestExport';
export const EXPORT_PROGRESS_QUERY = 'exportProgress';
