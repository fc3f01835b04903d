import { request as httpRequest } from 'node:http';
import type { CommandStartedEvent } from 'mongodb';
import { GATEWAYS_COLLECTION, STATE_CHANGES_COLLECTION } from '../../services/core/change-feed.ts';
import type { World } from './world.ts';

const FEED_COLLECTIONS = new Set([STATE_CHANGES_COLLECTION, GATEWAYS_COLLECTION]);

export interface SocketAnswer {
  statusCode: number;
  headers: Record<string, string | string[] | undefined>;
  body: string;
  json(): any;
}

/**
 * A GET over a real connection to a listening gateway: the lanes in front of Fastify
 * (services/http/lane-server.ts) only see requests that come through its HTTP server, not `inject`.
 */
export function socketGet(port: number, path: string, headers: Record<string, string> = {}): Promise<SocketAnswer> {
  return new Promise((resolve, reject) => {
    const sent = httpRequest({ host: '127.0.0.1', port, path, headers: { host: 'localhost', ...headers } }, (response) => {
      const chunks: Buffer[] = [];
      response.on('data', (chunk: Buffer) => chunks.push(chunk));
      response.on('end', () => {
        const body = Buffer.concat(chunks).toString();
        resolve({ statusCode: response.statusCode!, headers: response.headers, body, json: () => JSON.parse(body) });
      });
    });
    sent.on('error', reject);
    sent.end();
  });
}

/**
 * Starts the world's gateway listening and records the database commands it sends, the change
 * feed's own polling and lease left out (the world needs `monitorCommands: true`).
 */
export async function listenRecordingCommands(world: World): Promise<{ port: number; commandsDuring(run: () => Promise<unknown>): Promise<string[]> }> {
  await world.app.listen({ port: 0, host: '127.0.0.1' });
  let commands: string[] = [];
  world.services.mongo.on('commandStarted', (event: CommandStartedEvent) => {
    const target = event.commandName === 'getMore' ? event.command.collection : event.command[event.commandName];
    if (!FEED_COLLECTIONS.has(target)) commands.push(`${event.commandName} ${String(target)}`);
  });
  return {
    port: (world.app.server.address() as { port: number }).port,
    async commandsDuring(run) {
      // Audit rows and search postings are written a moment after the change they record: an earlier request's must not land in this window.
      await world.services.audit.settled();
      await world.services.searchSync.settled();
      commands = [];
      await run();
      return commands;
    },
  };
}
