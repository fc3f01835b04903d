/** The content type of newline-delimited JSON bodies and answers (the content import and export). */
export const NDJSON_CONTENT_TYPE = 'application/x-ndjson';
