import type { Feature } from '../core/feature.ts';
import { getEmailTemplateOp, listEmailTemplatesOp, previewEmailTemplateOp, putEmailTemplateOp, restoreEmailTemplateOp } from './email-templates-ops.ts';
import { EMAIL_TEMPLATES_COLLECTION } from './email-templates.ts';

export const emailTemplatesFeature: Feature = {
  name: 'email-templates',
  operations: [listEmailTemplatesOp, getEmailTemplateOp, putEmailTemplateOp, previewEmailTemplateOp, restoreEmailTemplateOp],
  indexes: [{ collection: EMAIL_TEMPLATES_COLLECTION, keys: { siteId: 1, key: 1 }, options: { unique: true } }],
};
