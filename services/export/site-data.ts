import type { Db } from 'mongodb';
import { COLLECTIONS, type ContentTypeDoc } from '../content/model.ts';
import type { TaxonomyDoc, TermDoc } from '../content/taxonomies.ts';
import { DESIGN_COLLECTION, type DesignDoc } from '../design/store.ts';
import { WIDGET_COLLECTIONS, type AreaDoc, type WidgetDoc } from '../design/widgets.ts';
import { activeTheme } from '../plugins/themes.ts';
import type { ThemeDefinition } from '../plugins/themes.ts';
import type { Site } from '../core/tenants.ts';
import { languagesDocId, type LanguagesDoc } from '../languages/languages.ts';
import { siteStateCollection } from '../core/site-state.ts';
import { MENUS_COLLECTION, type MenuDoc } from '../menus/menus.ts';
import { REDIRECTS_COLLECTION, type RedirectDoc } from '../redirects/redirects.ts';
import { readSettingsDoc } from '../access/site-settings-store.ts';
import type { BlockDocument } from '../content/model.ts';
import { sha256 } from './files.ts';
import type { Config } from '../core/config.ts';
import { siteOrigin } from '../tenancy/site-origin.ts';
import { DEFAULT_PERMALINKS, permalinksKey, type Permalinks } from '../core/permalinks.ts';

/** Everything besides entries that a page shows: what makes every page stale when it changes. */
export interface SiteData {
  title: string;
  /**
   * Absolute origin of page links (canonical, sitemap, feed, robots.txt, media): the one rule
   * media links follow too (services/tenancy/site-origin.ts), else `http://localhost` for a site
   * with neither a domain nor PUBLIC_BASE_URL (a sitemap needs absolute URLs). Part of the design
   * hash: changing PUBLIC_BASE_URL makes every page stale.
   */
  origin: string;
  theme: ThemeDefinition;
  locales: string[];
  defaultLocale: string;
  types: Pick<ContentTypeDoc, 'slug' | 'label'>[];
  taxonomies: Pick<TaxonomyDoc, 'slug' | 'label'>[];
  terms: Pick<TermDoc, '_id' | 'taxonomy' | 'name' | 'slug'>[];
  menus: Pick<MenuDoc, 'slug' | 'name' | 'locale' | 'location' | 'items'>[];
  areas: { key: string; name: string; widgets: Pick<WidgetDoc, 'type' | 'title' | 'settings'>[] }[];
  /** Published customizer values, written as CSS custom properties. */
  customizer: Record<string, unknown>;
  errorPages: Record<string, { title: string; blocks: BlockDocument }>;
  reusableBlocks: Record<string, BlockDocument>;
  redirects: Pick<RedirectDoc, 'from' | 'to' | 'status'>[];
  /** Where entries live (design/permalinks.ts). */
  permalinks: Permalinks;
  /** The site default header (a template part in the header area). */
  headerDefault: string;
  /** Template parts the site saved (the theme's `header` and `footer` render the built-in layout until then). */
  parts: Record<string, { area: string; title: string; blocks: BlockDocument }>;
  /** Template hierarchy slots with a published custom layout (drafts are never exported). */
  templates: Record<string, BlockDocument>;
  /** Content type → the widget areas its pages show; null = no layout saved: every area everywhere. */
  widgetLayout: Record<string, string[]> | null;
  designHash: string;
  /** A change of this moves entry pages: the next run is full (runner.ts). */
  pathsKey: string;
}

export async function loadSiteData(db: Db, site: Pick<Site, '_id' | 'name' | 'domains'>, config: Pick<Config, 'PUBLIC_BASE_URL'>): Promise<SiteData> {
  const siteId = site._id;
  const [settings, languages, types, taxonomies, terms, menus, areas, widgets, design, redirects, theme] = await Promise.all([
    readSettingsDoc(db, siteId),
    siteStateCollection<LanguagesDoc>(db).findOne({ _id: languagesDocId(siteId), siteId }),
    db
      .collection<ContentTypeDoc>(COLLECTIONS.types)
      .find({ siteId }, { projection: { slug: 1, label: 1 } })
      .sort({ slug: 1 })
      .toArray(),
    db
      .collection<TaxonomyDoc>(COLLECTIONS.taxonomies)
      .find({ siteId }, { projection: { slug: 1, label: 1 } })
      .sort({ slug: 1 })
      .toArray(),
    db
      .collection<TermDoc>(COLLECTIONS.terms)
      .find({ siteId }, { projection: { taxonomy: 1, name: 1, slug: 1 } })
      .sort({ _id: 1 })
      .toArray(),
    db
      .collection<MenuDoc>(MENUS_COLLECTION)
      .find({ siteId, trashedAt: null }, { projection: { slug: 1, name: 1, locale: 1, location: 1, items: 1 } })
      .sort({ slug: 1 })
      .toArray(),
    db.collection<AreaDoc>(WIDGET_COLLECTIONS.areas).find({ siteId }).sort({ key: 1 }).toArray(),
    db
      .collection<WidgetDoc>(WIDGET_COLLECTIONS.widgets)
      .find({ siteId, area: { $ne: null } })
      .sort({ area: 1, position: 1, _id: 1 })
      .toArray(),
    db
      .collection<DesignDoc>(DESIGN_COLLECTION)
      .find({
        siteId,
        kind: { $in: ['customizer', 'error-page', 'reusable-block', 'template', 'template-part', 'permalinks', 'header-settings', 'widget-layout'] },
      })
      .sort({ _id: 1 })
      .toArray(),
    db
      .collection<RedirectDoc>(REDIRECTS_COLLECTION)
      .find({ siteId, enabled: true }, { projection: { from: 1, to: 1, status: 1 } })
      .sort({ from: 1 })
      .toArray(),
    activeTheme(db, siteId),
  ]);
  const active = (languages?.languages ?? [{ code: 'en', active: true }]).filter((l) => l.active).map((l) => l.code);
  const defaultLocale = languages?.defaultCode ?? 'en';
  const byKind = (kind: string) => design.filter((d) => d.kind === kind);
  const customizer = ((byKind('customizer')[0]?.value as { published?: Record<string, unknown> } | undefined)?.published ?? {}) as Record<string, unknown>;
  const titleSetting = settings?.values.title;
  const permalinks = (byKind('permalinks')[0]?.value as unknown as Permalinks | undefined) ?? DEFAULT_PERMALINKS;
  const liveTemplates = byKind('template').flatMap((d) => {
    const live = (d.value as { live?: { blocks: BlockDocument } | null }).live;
    return live ? [[d.key, live.blocks] as const] : [];
  });
  const data: Omit<SiteData, 'designHash' | 'pathsKey'> = {
    title: typeof titleSetting === 'string' && titleSetting ? titleSetting : site.name,
    origin: siteOrigin(config, site) || 'http://localhost',
    theme,
    locales: active.includes(defaultLocale) ? active : [defaultLocale, ...active],
    defaultLocale,
    types: types.map((t) => ({ slug: t.slug, label: t.label })),
    taxonomies: taxonomies.map((t) => ({ slug: t.slug, label: t.label })),
    terms: terms.map((t) => ({ _id: t._id, taxonomy: t.taxonomy, name: t.name, slug: t.slug })),
    menus: menus.map((m) => ({ slug: m.slug, name: m.name, locale: m.locale, location: m.location, items: m.items })),
    areas: areas.map((a) => ({
      key: a.key,
      name: a.name,
      widgets: widgets.filter((w) => w.area === a.key).map((w) => ({ type: w.type, title: w.title, settings: w.settings })),
    })),
    customizer,
    errorPages: Object.fromEntries(byKind('error-page').map((d) => [d.key, d.value as { title: string; blocks: BlockDocument }])),
    reusableBlocks: Object.fromEntries(byKind('reusable-block').map((d) => [d.key, (d.value as { blocks: BlockDocument }).blocks])),
    redirects: redirects.map((r) => ({ from: r.from, to: r.to, status: r.status })),
    permalinks,
    headerDefault: (byKind('header-settings')[0]?.value as { default?: string } | undefined)?.default ?? 'header',
    parts: Object.fromEntries(byKind('template-part').map((d) => [d.key, d.value as SiteData['parts'][string]])),
    templates: Object.fromEntries(liveTemplates),
    widgetLayout: (byKind('widget-layout')[0]?.value as Record<string, string[]> | undefined) ?? null,
  };
  const { theme: _theme, ...rest } = data;
  return { ...data, designHash: sha256(JSON.stringify(rest)), pathsKey: permalinksKey(permalinks) };
}
