import type { Feature } from './core/feature.ts';
import type { Operation } from './core/operation.ts';
import { platformFeature } from './platform/feature.ts';
import { accessFeature } from './access/feature.ts';
import { settingsFeature } from './settings/feature.ts';
import { eventsFeature } from './events/feature.ts';
import { mediaFeature } from './media/feature.ts';
import { contentFeature } from './content/feature.ts';
import { languagesFeature } from './languages/feature.ts';
import { menusFeature } from './menus/feature.ts';
import { oauthFeature } from './oauth/feature.ts';
import { pluginsFeature } from './plugins/feature.ts';
import { exportFeature } from './export/feature.ts';
import { cacheFeature } from './cache/feature.ts';
import { commentsFeature } from './comments/feature.ts';
import { redirectsFeature } from './redirects/feature.ts';
import { emailTemplatesFeature } from './email-templates/feature.ts';
import { cookiesFeature } from './cookies/feature.ts';
import { analyticsFeature } from './analytics/feature.ts';
import { designFeature } from './design/feature.ts';
import { auditFeature } from './audit/feature.ts';
import { mailFeature } from './mail/feature.ts';

/** Every feature folder, in the order they provision a new workspace. */
export const features: readonly Feature[] = [
  platformFeature,
  settingsFeature,
  accessFeature,
  eventsFeature,
  mediaFeature,
  languagesFeature,
  contentFeature,
  menusFeature,
  oauthFeature,
  pluginsFeature,
  exportFeature,
  cacheFeature,
  commentsFeature,
  redirectsFeature,
  emailTemplatesFeature,
  cookiesFeature,
  analyticsFeature,
  designFeature,
  auditFeature,
  mailFeature,
];

export const allOperations = (): Operation[] => features.flatMap((feature) => [...feature.operations]);
