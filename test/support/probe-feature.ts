import { z } from 'zod';
import { defineOperation } from '../../services/core/operation.ts';
import type { Feature } from '../../services/core/feature.ts';
import { newId } from '../../services/core/ids.ts';

/**
 * A tiny feature that exists only in tests: anonymous notes on the public surface, so the
 * foundation (tenancy, errors, registry) can be tested without depending on a real feature.
 */
const Note = z.object({ id: z.string(), text: z.string() });

const createNote = defineOperation({
  id: 'notes.create',
  surface: 'public',
  method: 'POST',
  path: '/test-notes',
  summary: 'Create a note (tests only)',
  requires: 'public',
  status: 201,
  input: z.object({ text: z.string().min(1).max(100), count: z.number().int().optional() }),
  output: Note,
  async handler(ctx, input) {
    const id = newId();
    await ctx.db.collection('test_notes').insertOne({ _id: id as never, siteId: ctx.site._id, text: input.text });
    return { id, text: input.text };
  },
});

const listNotes = defineOperation({
  id: 'notes.list',
  surface: 'public',
  method: 'GET',
  path: '/test-notes',
  summary: 'List notes (tests only)',
  requires: 'public',
  input: z.object({}),
  output: z.object({ items: z.array(Note) }),
  async handler(ctx) {
    const rows = await ctx.db.collection<{ _id: string; text: string }>('test_notes').find({ siteId: ctx.site._id }).toArray();
    return { items: rows.map((row) => ({ id: row._id, text: row.text })) };
  },
});

const explode = defineOperation({
  id: 'notes.explode',
  surface: 'public',
  method: 'GET',
  path: '/test-explode',
  summary: 'Fails unexpectedly (tests only)',
  requires: 'public',
  input: z.object({}),
  output: z.object({}),
  async handler() {
    throw new Error('database password is hunter2');
  },
});

export const probeFeature: Feature = { name: 'test-notes', operations: [createNote, listNotes, explode] };
