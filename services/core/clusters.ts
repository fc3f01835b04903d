import { MongoClient, type MongoClientOptions } from 'mongodb';

/** The cluster `MONGODB_URI` names: it holds the platform database and every workspace not placed elsewhere. */
export const DEFAULT_CLUSTER = 'default';

/** A label: lower-case letters, digits and `-`; the part before the first `-` is its region (`eu-2` → `eu`). */
export const CLUSTER_LABEL = /^[a-z0-9][a-z0-9-]{0,31}$/;
const URI = /^mongodb(\+srv)?:\/\/\S+$/;

export interface ClusterSpec {
  label: string;
  region: string;
  uri: string;
}

export const regionOf = (label: string) => label.split('-')[0] as string;

/**
 * `MONGODB_CLUSTERS` (docs/placement.md): a JSON object `{"eu-1":"mongodb://…"}`, or `label=uri`
 * entries separated by `;` or white space. The default cluster is `MONGODB_URI`, never named here.
 * Throws a message naming the bad entry (config.ts turns it into a start-up error).
 */
export function parseClusters(text: string | undefined): ClusterSpec[] {
  const raw = (text ?? '').trim();
  if (!raw) return [];
  let pairs: [string, unknown][];
  if (raw.startsWith('{')) {
    let parsed: unknown;
    try {
      parsed = JSON.parse(raw);
    } catch {
      throw new Error('is not valid JSON');
    }
    if (!parsed || typeof parsed !== 'object' || Array.isArray(parsed)) throw new Error('must be a JSON object of label → URI');
    pairs = Object.entries(parsed);
  } else {
    pairs = raw
      .split(/[;\s]+/)
      .filter(Boolean)
      .map((entry) => {
        const at = entry.indexOf('=');
        if (at < 1) throw new Error(`entry "${entry.slice(0, 40)}" is not label=uri`);
        return [entry.slice(0, at), entry.slice(at + 1)];
      });
  }
  const seen = new Set<string>();
  return pairs.map(([label, uri]) => {
    if (!CLUSTER_LABEL.test(label)) throw new Error(`label "${label.slice(0, 40)}" must be lower-case letters, digits and - (at most 32)`);
    if (label === DEFAULT_CLUSTER) throw new Error(`"${DEFAULT_CLUSTER}" is MONGODB_URI's label`);
    if (seen.has(label)) throw new Error(`label "${label}" is named twice`);
    if (typeof uri !== 'string' || !URI.test(uri)) throw new Error(`cluster "${label}" must be a mongodb:// or mongodb+srv:// URI`);
    seen.add(label);
    return { label, region: regionOf(label), uri };
  });
}

/**
 * One MongoClient per cluster and process: the default one (already connected, it holds the
 * platform database), the others opened on first use (the driver connects with the first
 * command), all closed together on shutdown.
 */
export interface ClusterPool {
  /** Every cluster's label and region, the default first. */
  readonly clusters: readonly Omit<ClusterSpec, 'uri'>[];
  has(label: string): boolean;
  client(label: string): MongoClient;
  close(): Promise<void>;
}

export function createClusterPool(defaultClient: MongoClient, specs: readonly ClusterSpec[], options: MongoClientOptions): ClusterPool {
  const clients = new Map<string, MongoClient>([[DEFAULT_CLUSTER, defaultClient]]);
  const uris = new Map(specs.map((spec) => [spec.label, spec.uri]));
  return {
    clusters: [{ label: DEFAULT_CLUSTER, region: DEFAULT_CLUSTER }, ...specs.map(({ label, region }) => ({ label, region }))],
    has: (label) => label === DEFAULT_CLUSTER || uris.has(label),
    client(label) {
      let client = clients.get(label);
      if (!client) {
        const uri = uris.get(label);
        if (!uri) throw new Error(`unknown cluster ${label}`);
        client = new MongoClient(uri, options);
        clients.set(label, client);
      }
      return client;
    },
    async close() {
      // The default client is closed by closeServices with the rest of the process.
      await Promise.all([...clients].filter(([label]) => label !== DEFAULT_CLUSTER).map(([, client]) => client.close().catch(() => undefined)));
    },
  };
}
