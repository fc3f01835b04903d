// Shared by the content pages (list, editor, trash): what the signed-in user may do, and the
// site's choices (types, languages, people, taxonomies and their terms) for filters and forms.
import { api, ApiError, el } from './common.js';

/** Controls for what the role lacks are hidden; the API refuses them anyway. */
export const can = (user, capability) => user.capabilities.includes(capability);

export const option = (value, label) => el('option', { value }, label);

/** A list the role may not read (settings, users) is simply not offered: an empty list. */
async function allowed(path) {
  try {
    return (await api('GET', path)).data;
  } catch (error) {
    if (error instanceof ApiError && (error.status === 401 || error.status === 403)) return [];
    throw error;
  }
}

/** Lists the role cannot read are not asked for (languages need `settings:read`, people `users:read`). */
export async function loadChoices(user) {
  const none = Promise.resolve([]);
  const [types, languages, users, taxonomies] = await Promise.all([
    allowed('/api/content-types?limit=200'),
    can(user, 'settings:read') ? allowed('/api/languages?limit=200') : none,
    can(user, 'users:read') ? allowed('/api/users?limit=200') : none,
    allowed('/api/taxonomies?limit=200'),
  ]);
  const withTerms = await Promise.all(
    taxonomies.map(async (taxonomy) => ({ ...taxonomy, terms: await allowed(`/api/taxonomies/${encodeURIComponent(taxonomy.slug)}/terms?limit=200`) })),
  );
  return { types, languages, users, taxonomies: withTerms };
}
