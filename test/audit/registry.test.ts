import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { startWorld, type World } from '../support/world.ts';
import { defaultSiteContext } from '../support/access.ts';
import { allOperations } from '../../services/features.ts';
import { createOperationRunner } from '../../services/http/run-operation.ts';
import { createDenyAllGate } from '../../services/access/gate.ts';
import { createContext } from '../../services/core/context.ts';
import { CAPABILITIES, isPlatformCapability, PLATFORM_CAPABILITIES, requiredCapabilities } from '../../services/core/capabilities.ts';
import { BadRequestError } from '../../services/core/errors.ts';
import type { Operation } from '../../services/core/operation.ts';
import { accessCollections, ACCESS_COLLECTIONS } from '../../services/access/model.ts';
import type { AuditDoc } from '../../services/audit/model.ts';
import { audited } from '../../services/audit/record.ts';

/**
 * Every operation of the registry, run through the one runner with its own definition (path, method,
 * surface, requirement, audit declaration) and a stand-in handler: a success leaves exactly one row
 * (in the platform's log for operator actions, else the workspace's), a failure none. A new
 * operation is covered without anyone adding it here.
 */
let world: World;
beforeAll(async () => {
  world = await startWorld({ env: { CHECK_CONTRACTS: 'false' } });
});
afterAll(() => world?.close());

const everyCapability = new Set([...CAPABILITIES, ...PLATFORM_CAPABILITIES]);

describe('the runner audits every change of the registry', () => {
  it('exactly one row per successful non-GET operation, none for a GET, a failure or a declared non-change', async () => {
    const site = await defaultSiteContext(world);
    const runner = createOperationRunner(world.services, createDenyAllGate(world.services));
    const ctx = createContext(
      world.services,
      { workspace: site.workspace, site: site.site },
      { kind: 'user', userId: 'u-registry', sessionId: 's', capabilities: everyCapability, isPlatformOperator: true },
      { id: 'req-registry', ip: '127.0.0.1' },
    );
    const workspaceLog = accessCollections(site.db).audit;
    const platformLog = world.services.platformDb.collection<AuditDoc>(ACCESS_COLLECTIONS.audit);
    const rowsOf = async (operation: Operation) => {
      await world.services.audit.settled();
      return {
        workspace: await workspaceLog.find({ operation: operation.id }).toArray(),
        platform: await platformLog.find({ operation: operation.id }).toArray(),
      };
    };

    const operations = allOperations();
    let changes = 0;
    for (const operation of operations) {
      const params = Object.fromEntries([...operation.path.matchAll(/:([A-Za-z0-9_]+)/g)].map((m) => [m[1], `p-${m[1]}`]));
      const standIn = (handler: Operation['handler']): Operation => ({ ...operation, input: z.looseObject({}), handler });
      await expect(
        runner.run(
          ctx,
          standIn(async () => Promise.reject(new BadRequestError('no'))),
          params,
        ),
      ).rejects.toThrow('no');
      expect(await rowsOf(operation), `${operation.id} failed`).toEqual({ workspace: [], platform: [] });

      await runner.run(
        ctx,
        standIn(async () => ({ id: `out-${operation.id}`, workspaceId: site.workspace._id })),
        params,
      );
      const rows = await rowsOf(operation);
      if (!audited(operation)) {
        expect(rows, `${operation.id} is no change`).toEqual({ workspace: [], platform: [] });
        expect(operation.method === 'GET' || operation.audit === false || ['public', 'comments'].includes(operation.surface), operation.id).toBe(true);
        continue;
      }
      changes += 1;
      const operator = requiredCapabilities(operation.requires).some(isPlatformCapability);
      const [mine, other] = operator ? [rows.platform, rows.workspace] : [rows.workspace, rows.platform];
      expect(other, operation.id).toEqual([]);
      expect(mine, operation.id).toHaveLength(1);
      expect(mine[0], operation.id).toMatchObject({ userId: 'u-registry', requestId: 'req-registry', workspaceId: site.workspace._id, siteId: site.site._id });
      expect(mine[0].target?.id, operation.id).toBeTruthy();
      expect(mine[0].expiresAt!.getTime(), operation.id).toBeGreaterThan(Date.now());
    }
    // Every non-GET operation of the signed-in surfaces is a change but the declared renders.
    expect(changes).toBe(operations.filter((op) => op.method !== 'GET' && op.audit !== false && !['public', 'comments'].includes(op.surface)).length);
    expect(changes).toBeGreaterThan(100);
  });
});
