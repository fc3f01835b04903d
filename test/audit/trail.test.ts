import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { MongoNetworkError, type Collection } from 'mongodb';
import { startWorld, type World } from '../support/world.ts';
import { addTestUser, createApiKey, defaultSiteContext, signIn } from '../support/access.ts';
import { PLATFORM_KEY_CAPABILITIES } from '../platform/support.ts';
import { multipartBody, pdfOfSize } from '../media/support.ts';
import { accessCollections, ACCESS_COLLECTIONS } from '../../services/access/model.ts';
import type { AuditDoc } from '../../services/audit/model.ts';
import { recordChange } from '../../services/audit/record.ts';
import { systemPrincipal } from '../../services/core/principal.ts';

/** Set by a test to make the audit store refuse every write (the trail's write hook). */
let refuse = false;
/** Set by a test: this many writes fail as a broken connection does, the last one after its rows landed. */
let outage = 0;
let world: World;
let key: string;
let keyId: string;
let adminId: string;
let workspaceAudit: Collection<AuditDoc>;
let platformAudit: Collection<AuditDoc>;

beforeAll(async () => {
  world = await startWorld({
    env: { WEBHOOK_ALLOW_PRIVATE_TARGETS: 'true' },
    audit: {
      async write(collection, rows) {
        if (refuse) throw new Error('audit store refuses writes');
        if (outage > 0) {
          outage--;
          // The last broken write landed, only its answer was lost: the retry meets its own rows.
          if (outage === 0) await collection.insertMany(rows, { ordered: false });
          throw new MongoNetworkError(`connection 7 to ${collection.dbName} closed`);
        }
        await collection.insertMany(rows, { ordered: false });
      },
    },
  });
  ({ key, id: keyId } = await createApiKey(world, { capabilities: PLATFORM_KEY_CAPABILITIES }));
  const ctx = await defaultSiteContext(world);
  workspaceAudit = accessCollections(ctx.db).audit;
  platformAudit = world.services.platformDb.collection<AuditDoc>(ACCESS_COLLECTIONS.audit);
  adminId = (await accessCollections(ctx.db).users.findOne({ email: world.admin.email }))!._id;
});
afterAll(() => world?.close());

const call = (method: string, url: string, payload?: unknown, as = key) =>
  world.app.inject({ method: method as never, url: `/api/manage/v1${url}`, headers: { authorization: `Bearer ${as}` }, payload: payload as never });

/** Change rows (not failure rows) added to either log while `run` ran. */
async function rowsOf(run: () => Promise<unknown>): Promise<{ workspace: AuditDoc[]; platform: AuditDoc[] }> {
  await world.services.audit.settled();
  const seen = async (c: Collection<AuditDoc>) => new Set((await c.find({}, { projection: { _id: 1 } }).toArray()).map((r) => r._id));
  const [before, beforePlatform] = [await seen(workspaceAudit), await seen(platformAudit)];
  await run();
  await world.services.audit.settled();
  const fresh = async (c: Collection<AuditDoc>, known: Set<string>) =>
    (
      await c
        .find({ agg: { $exists: false } })
        .sort({ _id: 1 })
        .toArray()
    ).filter((r) => !known.has(r._id));
  return { workspace: await fresh(workspaceAudit, before), platform: await fresh(platformAudit, beforePlatform) };
}

/** Runs one successful call and returns its one row (in the workspace log, or the platform's). */
async function oneRow(method: string, url: string, payload: unknown, status: number, where: 'workspace' | 'platform' = 'workspace') {
  let response!: Awaited<ReturnType<typeof call>>;
  const rows = await rowsOf(async () => {
    response = await call(method, url, payload);
  });
  expect(response.statusCode, response.body).toBe(status);
  expect(rows[where === 'workspace' ? 'platform' : 'workspace']).toEqual([]);
  expect(rows[where], `${method} ${url}`).toHaveLength(1);
  const row = rows[where][0];
  expect(row).toMatchObject({ userId: adminId, keyId, system: null, ip: '127.0.0.1' });
  expect(row.requestId).toBeTruthy();
  expect(row.at).toBeInstanceOf(Date);
  return { row, body: response.statusCode === 204 ? null : response.json() };
}

describe('every change leaves one audit row', () => {
  it('content: create, update, publish, delete name the entry, the fields and the status change', async () => {
    const created = await oneRow('POST', '/content', { title: 'Audited', type: 'post' }, 201);
    const id = created.body.id as string;
    expect(created.row).toMatchObject({ action: 'content.create', operation: 'content.create', target: { kind: 'content', id } });
    expect(created.row.summary?.fields).toEqual(expect.arrayContaining(['title', 'type']));
    const updated = await oneRow('PATCH', `/content/${id}`, { title: 'Audited again', status: 'draft' }, 200);
    expect(updated.row).toMatchObject({
      action: 'content.update',
      target: { kind: 'content', id },
      summary: { fields: ['title', 'status'], changes: { status: { to: 'draft' } } },
    });
    expect(JSON.stringify(updated.row)).not.toContain('Audited again');
    expect((await oneRow('POST', `/content/${id}/publish`, {}, 200)).row).toMatchObject({ action: 'content.publish', target: { kind: 'content', id } });
    expect((await oneRow('DELETE', `/content/${id}`, undefined, 200)).row).toMatchObject({ action: 'content.delete', target: { kind: 'content', id } });
  });

  it('settings, users, roles, languages, redirects, webhooks: one row each, values only of state-like fields', async () => {
    expect((await oneRow('PATCH', '/settings', { title: 'Site title', api: { publicEnabled: true } }, 200)).row).toMatchObject({
      action: 'settings.update',
      target: { kind: 'settings', id: (await defaultSiteContext(world)).site._id },
      summary: { fields: expect.arrayContaining(['title', 'api']), changes: { api: { to: { publicEnabled: true } } } },
    });
    const password = 'a-password-nobody-may-see-1';
    const user = await oneRow('POST', '/users', { email: 'audited@example.test', password, role: 'editor' }, 201);
    expect(user.row).toMatchObject({ action: 'users.create', target: { kind: 'users', id: user.body.id }, summary: { changes: { role: { to: 'editor' } } } });
    const newPassword = 'another-password-nobody-sees-2';
    const patched = await oneRow('PATCH', `/users/${user.body.id}`, { role: 'author', password: newPassword }, 200);
    expect(patched.row.summary).toMatchObject({ fields: ['role', 'password'], changes: { role: { from: 'editor', to: 'author' } } });
    const role = await oneRow('POST', '/roles', { name: 'audited role', capabilities: ['content:read'] }, 201);
    expect(role.row).toMatchObject({ action: 'roles.create', summary: { changes: { capabilities: { to: ['content:read'] } } } });
    expect((await oneRow('DELETE', `/roles/${role.body.id}`, undefined, 200)).row).toMatchObject({
      action: 'roles.delete',
      target: { kind: 'roles', id: role.body.id },
    });
    expect((await oneRow('POST', '/languages', { code: 'fr', name: 'Français' }, 201)).row).toMatchObject({ action: 'languages.create' });
    expect((await oneRow('POST', '/redirects', { from: '/old-audited', to: '/new-audited' }, 201)).row).toMatchObject({ action: 'redirects.create' });
    const hook = await oneRow('POST', '/webhooks', { name: 'audited hook', url: 'http://127.0.0.1:9/audited', events: ['content.created'] }, 201);
    const hookId = hook.row.target!.id;
    const rotated = await oneRow('POST', `/webhooks/${hookId}/rotate-secret`, {}, 200);
    expect(rotated.row).toMatchObject({ action: 'webhooks.rotateSecret', target: { kind: 'webhooks', id: hookId } });
    await oneRow('DELETE', `/webhooks/${hookId}`, undefined, 200);

    // No secret, password or hash anywhere in the log.
    const stored = await accessCollections((await defaultSiteContext(world)).db).users.findOne({ _id: user.body.id });
    const all = JSON.stringify(await workspaceAudit.find({}).toArray()) + JSON.stringify(await platformAudit.find({}).toArray());
    const secrets = [password, newPassword, stored!.passwordHash, hook.body.secret, rotated.body.secret].filter(
      (s): s is string => typeof s === 'string' && s.length > 0,
    );
    expect(secrets.length).toBeGreaterThanOrEqual(4);
    for (const secret of [...secrets, 'passwordHash', 'secretHash']) expect(all).not.toContain(secret);
  });

  it('keys and sign-in on the admin surface: the key is the target, its secret in no row', async () => {
    const admin = await signIn(world);
    const adminCall = (method: string, url: string, payload?: object) =>
      world.app.inject({ method: method as never, url, headers: { cookie: admin.cookie, origin: admin.origin }, ...(payload ? { payload } : {}) });
    let issued!: { key: string; record: { id: string } };
    let rotated!: string;
    const rows = await rowsOf(async () => {
      issued = (await adminCall('POST', '/api/api-keys', { name: 'audited key', capabilities: ['content:read'] })).json();
      rotated = (await adminCall('POST', `/api/api-keys/${issued.record.id}/rotate`)).json().key;
      await adminCall('POST', `/api/api-keys/${issued.record.id}/revoke`);
    });
    expect(rows.workspace.map((r) => [r.action, r.target?.id, r.userId, r.keyId])).toEqual([
      ['key.created', issued.record.id, adminId, null],
      ['key.rotated', issued.record.id, adminId, null],
      ['key.revoked', issued.record.id, adminId, null],
    ]);
    const all = JSON.stringify(await workspaceAudit.find({}).toArray());
    for (const secret of [issued.key, rotated, issued.key.slice(4), world.admin.password]) expect(all).not.toContain(secret);
    // Sign-in is an account event: the row names the user who signed in.
    const login = await rowsOf(() => signIn(world));
    expect(login.workspace).toEqual([expect.objectContaining({ action: 'auth.login', target: { kind: 'user', id: adminId } })]);
  });

  it('operator actions go to the platform log: quotas, operators; the retention setting to the workspace log with old → new', async () => {
    const tenant = world.defaultWorkspace.id;
    const quotas = await oneRow('PUT', `/tenants/${tenant}/quotas`, { quotas: { entries: 5000 } }, 200, 'platform');
    expect(quotas.row).toMatchObject({
      action: 'tenants.setQuotas',
      target: { kind: 'tenants', id: tenant },
      workspaceId: tenant,
      summary: { changes: { quotas: { to: { entries: 5000 } } } },
    });
    await oneRow('PUT', `/tenants/${tenant}/quotas`, { quotas: {} }, 200, 'platform');
    const editor = await addTestUser(world, 'operator-to-be@example.test', { role: 'editor' });
    expect((await oneRow('PUT', `/operators/${editor.id}`, undefined, 200, 'platform')).row).toMatchObject({
      action: 'operators.grant',
      target: { kind: 'operators', id: editor.id },
    });
    await oneRow('DELETE', `/operators/${editor.id}`, undefined, 204, 'platform');
    const retention = await oneRow('PUT', '/audit/retention', { days: 30 }, 200);
    expect(retention.row).toMatchObject({
      action: 'audit.retention.put',
      target: { kind: 'workspace', id: tenant },
      summary: { changes: { days: { from: 90, to: 30 } } },
    });
    expect((await call('GET', '/audit/retention')).json()).toMatchObject({ days: 30, default: 90 });
    await call('PUT', '/audit/retention', { days: 90 });
  });
});

describe('media, terms and agents', () => {
  it('a media upload names the new file; a term creation the term, not its taxonomy', async () => {
    const file = multipartBody('audited.pdf', pdfOfSize(2048), 'application/pdf');
    let uploaded!: Awaited<ReturnType<typeof call>>;
    const upload = await rowsOf(async () => {
      uploaded = await world.app.inject({
        method: 'POST',
        url: '/api/manage/v1/media',
        headers: { authorization: `Bearer ${key}`, ...file.headers },
        payload: file.payload,
      });
    });
    expect(uploaded.statusCode, uploaded.body).toBe(201);
    expect(upload.workspace).toEqual([expect.objectContaining({ action: 'media.upload', target: { kind: 'media', id: uploaded.json().id } })]);
    await oneRow('POST', '/taxonomies', { slug: 'audited-tax', label: 'Audited' }, 201);
    const term = await oneRow('POST', '/taxonomies/audited-tax/terms', { name: 'Audited term' }, 201);
    expect(term.row.target).toEqual({ kind: 'terms', id: term.body.id });
    expect((await oneRow('DELETE', `/taxonomies/audited-tax/terms/${term.body.id}`, undefined, 200)).row.target).toEqual({ kind: 'terms', id: term.body.id });
  });

  it('an MCP tool call is audited like the REST call, one row per successful tool call', async () => {
    let answers!: Array<{ result: { isError?: boolean } }>;
    const rows = await rowsOf(async () => {
      const response = await world.app.inject({
        method: 'POST',
        url: '/api/mcp',
        headers: { authorization: `Bearer ${key}`, accept: 'application/json, text/event-stream', 'content-type': 'application/json' },
        payload: [
          { jsonrpc: '2.0', id: 1, method: 'tools/call', params: { name: 'content_create', arguments: { title: 'By an agent', type: 'post' } } },
          { jsonrpc: '2.0', id: 2, method: 'tools/call', params: { name: 'content_create', arguments: { type: 'post' } } },
        ],
      });
      answers = response.json();
    });
    expect(answers.map((a) => Boolean(a.result.isError))).toEqual([false, true]);
    expect(rows.workspace).toEqual([expect.objectContaining({ action: 'content.create', keyId, userId: adminId })]);
  });
});

describe('a refused or failed change leaves no row', () => {
  it('bad input, unknown targets, missing capabilities, workspace and platform alike', async () => {
    const reader = (await createApiKey(world, { capabilities: ['content:read'] })).key;
    const rows = await rowsOf(async () => {
      const statuses = [
        (await call('POST', '/content', { type: 'post' })).statusCode,
        (await call('PATCH', '/content/no-such-entry', { title: 'x' })).statusCode,
        (await call('POST', '/users', { email: 'short@example.test', password: 'short' })).statusCode,
        (await call('PUT', '/tenants/no-such-tenant/quotas', { quotas: {} })).statusCode,
        (await call('PUT', '/audit/retention', { days: 0 })).statusCode,
        (await call('POST', '/roles', { name: 'nope', capabilities: [] }, reader)).statusCode,
        (await call('PUT', `/tenants/${world.defaultWorkspace.id}/quotas`, { quotas: {} }, reader)).statusCode,
      ];
      expect(statuses).toEqual([400, 404, 400, 404, 400, 403, 403]);
    });
    expect(rows).toEqual({ workspace: [], platform: [] });
  });

  it('an audit store that refuses writes fails no change, and the next row goes through again', async () => {
    refuse = true;
    let created!: Awaited<ReturnType<typeof call>>;
    try {
      const rows = await rowsOf(async () => {
        created = await call('POST', '/content', { title: 'Written though unaudited', type: 'post' });
      });
      expect(rows).toEqual({ workspace: [], platform: [] });
    } finally {
      refuse = false;
    }
    expect(created.statusCode, created.body).toBe(201);
    expect((await call('GET', `/content/${created.json().id}`)).statusCode).toBe(200);
    await oneRow('DELETE', `/content/${created.json().id}`, undefined, 200);
  });
});

describe('a database missing for a moment', () => {
  it('loses no row: the group is written once it answers again, once', async () => {
    outage = 2;
    let created!: Awaited<ReturnType<typeof call>>;
    const rows = await rowsOf(async () => {
      created = await call('POST', '/content', { title: 'Audited after the outage', type: 'post' });
    });
    expect(outage).toBe(0);
    expect(created.statusCode, created.body).toBe(201);
    expect(rows.workspace.map((row) => [row.action, row.target?.id])).toEqual([['content.create', created.json().id]]);
  });
});

describe('changes made by the system', () => {
  it('recordChange outside an operation is a row of its own with the system actor and its reason', async () => {
    const ctx = await defaultSiteContext(world);
    const system = { ...ctx, principal: systemPrincipal('scheduled publish'), request: { id: 'schedule:e1:t:publish', ip: '127.0.0.1' } };
    const rows = await rowsOf(async () => {
      recordChange(system, {
        action: 'content.published',
        target: { kind: 'entry', id: 'e1' },
        summary: {
          fields: ['status'],
          changes: { status: { from: 'scheduled', to: 'published' }, body: { to: 'secret body' } },
          note: 'publish date passed while suspended',
        },
      });
    });
    expect(rows.workspace).toEqual([
      expect.objectContaining({
        action: 'content.published',
        operation: null,
        userId: null,
        keyId: null,
        system: 'scheduled publish',
        requestId: 'schedule:e1:t:publish',
        target: { kind: 'entry', id: 'e1' },
        summary: { fields: ['status'], changes: { status: { from: 'scheduled', to: 'published' } }, note: 'publish date passed while suspended' },
      }),
    ]);
  });
});

describe('listing', () => {
  it('filters by actor, target, action and time, cursor-paged, oldest first', async () => {
    const other = (await createApiKey(world, { capabilities: ['content:create', 'content:update'] })).key;
    const start = new Date().toISOString();
    const ids: string[] = [];
    for (let i = 0; i < 5; i += 1) ids.push((await call('POST', '/content', { title: `Listed ${i}`, type: 'post' }, other)).json().id);
    await call('PATCH', `/content/${ids[0]}`, { title: 'Listed again' }, other);
    await world.services.audit.settled();
    const otherKeyId = (await workspaceAudit.findOne({ operation: 'content.create', 'target.id': ids[0] }))!.keyId!;

    const byActor = await call('GET', `/audit?actor=${otherKeyId}&limit=2`);
    expect(byActor.statusCode, byActor.body).toBe(200);
    const pages: { target: { id: string }; action: string }[] = [...byActor.json().data];
    let cursor = byActor.json().page.nextCursor as string | null;
    while (cursor) {
      const next = (await call('GET', `/audit?actor=${otherKeyId}&limit=2&cursor=${encodeURIComponent(cursor)}`)).json();
      pages.push(...next.data);
      cursor = next.page.nextCursor;
    }
    expect(pages.map((r) => [r.action, r.target.id])).toEqual([...ids.map((id) => ['content.create', id]), ['content.update', ids[0]]]);

    const byTarget = (await call('GET', `/audit?targetKind=content&targetId=${ids[0]}`)).json().data;
    expect(byTarget.map((r: { action: string }) => r.action)).toEqual(['content.create', 'content.update']);
    expect((await call('GET', `/audit?action=content.update&actor=${otherKeyId}`)).json().data).toHaveLength(1);
    expect((await call('GET', `/audit?since=${encodeURIComponent(start)}&targetId=${ids[4]}`)).json().data).toHaveLength(1);
    expect((await call('GET', `/audit?until=${encodeURIComponent(start)}&targetId=${ids[4]}`)).json().data).toHaveLength(0);
    expect((await call('GET', '/audit?actor=system')).json().data.every((r: { system: string | null }) => r.system !== null)).toBe(true);
    expect((await call('GET', '/audit?since=yesterday')).statusCode).toBe(400);
    expect((await call('GET', '/audit?cursor=forged')).statusCode).toBe(400);

    const platform = await call('GET', `/platform/audit?targetKind=tenants&targetId=${world.defaultWorkspace.id}`);
    expect(platform.statusCode, platform.body).toBe(200);
    expect(platform.json().data.map((r: { action: string }) => r.action)).toEqual(expect.arrayContaining(['tenants.setQuotas']));
    expect((await call('GET', '/platform/audit', undefined, other)).statusCode).toBe(403);
  });
});
