import type { Feature } from '../core/feature.ts';
import { getEmailTemplateOp, listEmailTemplatesOp, previewEmailTemplateOp, putEmailTemplateOp, restoreEmailTemplateOp } from './email-templates-ops.ts';

export const emailTemplatesFeature: Feature = {
  name: 'email-templates',
  operations: [listEmailTemplatesOp, getEmailTemplateOp, putEmailTemplateOp, previewEmailTemplateOp, restoreEmailTemplateOp],
  // A `site_config` kind, unique by key there (core/site-config.ts).
};
