import { z } from 'zod';
import { ListQuery, pageEnvelope, pageInOrder } from '../core/paging.ts';
import { defineOperation, formatZodError } from '../core/operation.ts';
import type { OperationContext } from '../core/context.ts';
import { BadRequestError, NotFoundError } from '../core/errors.ts';
import { BUILTIN_TEMPLATES, emailTemplatesCollection, findBuiltin, placeholders, render, type BuiltinTemplate } from './email-templates.ts';

const Rendered = z.object({ subject: z.string(), html: z.string(), text: z.string() });
const TemplateView = z.object({
  key: z.string(),
  name: z.string(),
  description: z.string(),
  variables: z.array(z.string()),
  subject: z.string(),
  html: z.string(),
  text: z.string(),
  customized: z.boolean(),
  updatedAt: z.string().nullable(),
});
type TemplateView = z.infer<typeof TemplateView>;

function builtinOr404(key: string): BuiltinTemplate {
  const builtin = findBuiltin(key);
  if (!builtin) throw new NotFoundError('E-mail template not found');
  return builtin;
}

async function current(ctx: OperationContext, builtin: BuiltinTemplate): Promise<TemplateView> {
  const custom = await emailTemplatesCollection(ctx).findOne({ siteId: ctx.site._id, key: builtin.key });
  const source = custom ?? builtin;
  return {
    key: builtin.key,
    name: builtin.name,
    description: builtin.description,
    variables: Object.keys(builtin.variables),
    subject: source.subject,
    html: source.html,
    text: source.text,
    customized: custom !== null,
    updatedAt: custom ? custom.updatedAt.toISOString() : null,
  };
}

/** Only the template's own variables may appear: a typo would otherwise render as nothing in every mail. */
const TemplateBody = (variables: readonly string[]) =>
  z
    .object({
      subject: z
        .string()
        .trim()
        .min(1)
        .max(200)
        .regex(/^[^\r\n]*$/, 'one line'),
      html: z.string().min(1).max(100_000),
      text: z.string().min(1).max(100_000),
    })
    .superRefine((body, check) => {
      for (const field of ['subject', 'html', 'text'] as const) {
        const unknown = placeholders(body[field]).find((name) => !variables.includes(name));
        if (unknown) check.addIssue({ code: 'custom', path: [field], message: `unknown variable {{${unknown}}}; allowed: ${variables.join(', ')}` });
      }
    });

const AnyTemplateBody = z.object({ subject: z.string(), html: z.string(), text: z.string() });

export const listEmailTemplatesOp = defineOperation({
  id: 'emailTemplates.list',
  surface: 'manage',
  method: 'GET',
  path: '/email-templates',
  summary: 'System e-mail templates (built-in keys; customized or default)',
  requires: 'email-templates:manage',
  input: ListQuery,
  output: pageEnvelope(TemplateView),
  async handler(ctx, query) {
    const { items, page } = pageInOrder(ctx, 'email-templates', BUILTIN_TEMPLATES, (template) => template.key, query);
    return { data: await Promise.all(items.map((t) => current(ctx, t))), page };
  },
});

export const getEmailTemplateOp = defineOperation({
  id: 'emailTemplates.get',
  surface: 'manage',
  method: 'GET',
  path: '/email-templates/:key',
  summary: 'One template with a preview rendered from sample data',
  requires: 'email-templates:manage',
  input: z.object({ key: z.string() }),
  output: TemplateView.extend({ preview: Rendered }),
  async handler(ctx, { key }) {
    const builtin = builtinOr404(key);
    const view = await current(ctx, builtin);
    return { ...view, preview: render(view, builtin.variables) };
  },
});

export const putEmailTemplateOp = defineOperation({
  id: 'emailTemplates.put',
  surface: 'manage',
  method: 'PUT',
  path: '/email-templates/:key',
  summary: 'Customize a template (subject, html, text); only its own {{variables}} are allowed',
  requires: 'email-templates:manage',
  input: AnyTemplateBody.extend({ key: z.string() }),
  output: TemplateView.extend({ preview: Rendered }),
  async handler(ctx, { key, ...raw }) {
    const builtin = builtinOr404(key);
    const body = parseTemplateBody(builtin, raw);
    await emailTemplatesCollection(ctx).updateOne(
      { siteId: ctx.site._id, key },
      { $set: { ...body, updatedAt: ctx.services.clock.now() }, $setOnInsert: { _id: `${ctx.site._id}:${key}`, siteId: ctx.site._id, key } },
      { upsert: true },
    );
    const view = await current(ctx, builtin);
    return { ...view, preview: render(view, builtin.variables) };
  },
});

export const previewEmailTemplateOp = defineOperation({
  id: 'emailTemplates.preview',
  surface: 'manage',
  method: 'POST',
  path: '/email-templates/:key/preview',
  summary: 'Render unsaved changes (or the current template) with sample data; nothing is stored',
  requires: 'email-templates:manage',
  // A render: nothing changes, so no audit row.
  audit: false,
  input: AnyTemplateBody.partial().extend({ key: z.string(), data: z.record(z.string(), z.string().max(10_000)).optional() }),
  output: Rendered,
  async handler(ctx, { key, data, ...draft }) {
    const builtin = builtinOr404(key);
    const view = await current(ctx, builtin);
    const body = parseTemplateBody(builtin, { subject: draft.subject ?? view.subject, html: draft.html ?? view.html, text: draft.text ?? view.text });
    return render(body, { ...builtin.variables, ...data });
  },
});

export const restoreEmailTemplateOp = defineOperation({
  id: 'emailTemplates.restore',
  surface: 'manage',
  method: 'DELETE',
  path: '/email-templates/:key',
  summary: 'Restore the default wording (drops the customization)',
  requires: 'email-templates:manage',
  input: z.object({ key: z.string() }),
  output: TemplateView,
  async handler(ctx, { key }) {
    const builtin = builtinOr404(key);
    await emailTemplatesCollection(ctx).deleteOne({ siteId: ctx.site._id, key });
    return current(ctx, builtin);
  },
});

/** The allowed variables depend on the key, so the body is checked after the key is known. */
function parseTemplateBody(builtin: BuiltinTemplate, raw: unknown) {
  const result = TemplateBody(Object.keys(builtin.variables)).safeParse(raw);
  if (!result.success) throw new BadRequestError(formatZodError(result.error));
  return result.data;
}
