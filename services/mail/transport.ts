import { mkdir, writeFile } from 'node:fs/promises';
import { join, resolve } from 'node:path';
import type { Transporter } from 'nodemailer';
import type { Logger } from 'pino';
import type { Config } from '../core/config.ts';
import { createSecretBox, type SecretBox } from '../core/secret-box.ts';

/** What a transport sends: one rendered mail. `id` becomes its Message-ID. */
export interface OutgoingMail {
  id: string;
  from: string;
  to: string;
  subject: string;
  html: string;
  text: string;
}

/** The process's mail transport (a `Services` member) and the box its outbox bodies are sealed with. */
export interface Mailer {
  /** `smtp` with SMTP_URL, else `folder` (DATA_DIR/mail). */
  readonly kind: 'smtp' | 'folder';
  send(mail: OutgoingMail): Promise<void>;
  readonly bodies: SecretBox;
  close(): void;
}

/** SMTP waits, each well under the activity's start-to-close timeout (workflows/mail.ts). */
const SMTP_TIMEOUTS = { connectionTimeout: 10_000, greetingTimeout: 10_000, socketTimeout: 20_000 };

const messageId = (mail: OutgoingMail) => `<${mail.id}@${mail.from.split('@')[1] ?? 'localhost'}>`;

type TransportOptions = ({ url: string } & typeof SMTP_TIMEOUTS) | { streamTransport: true; buffer: true; newline: 'unix' };

/**
 * nodemailer (~0.7 MB of code) loads with the first mail sent, not with the process: a worker that
 * sends none never loads it (docs/production.md, "What the worker loads").
 */
function onFirstSend(options: TransportOptions) {
  let transport: Promise<Transporter> | null = null;
  return {
    get: () => (transport ??= import('nodemailer').then(({ default: nodemailer }) => nodemailer.createTransport(options) as Transporter)),
    close: () => void transport?.then((made) => made.close()),
  };
}

/**
 * SMTP through nodemailer when `SMTP_URL` is set. Without it (development), each mail is written as
 * an `.eml` file under DATA_DIR/mail/ and announced by one log line, so `npm start` shows it; the
 * line names the file, never the body (it may hold a single-use link).
 */
export function createMailer(config: Config, log: Logger): Mailer {
  const bodies = createSecretBox(config.SECRET_KEY, 'mail-bodies');
  if (config.SMTP_URL) {
    const smtp = onFirstSend({ url: config.SMTP_URL, ...SMTP_TIMEOUTS });
    return {
      kind: 'smtp',
      bodies,
      async send(mail) {
        await (
          await smtp.get()
        ).sendMail({ from: mail.from, to: mail.to, subject: mail.subject, html: mail.html, text: mail.text, messageId: messageId(mail) });
      },
      close: smtp.close,
    };
  }
  const folder = resolve(config.DATA_DIR, 'mail');
  const render = onFirstSend({ streamTransport: true, buffer: true, newline: 'unix' });
  return {
    kind: 'folder',
    bodies,
    async send(mail) {
      const { message } = await (
        await render.get()
      ).sendMail({
        from: mail.from,
        to: mail.to,
        subject: mail.subject,
        html: mail.html,
        text: mail.text,
        messageId: messageId(mail),
      });
      await mkdir(folder, { recursive: true });
      const file = join(folder, `${mail.id}.eml`);
      await writeFile(file, message as Buffer, { mode: 0o600 });
      log.info({ to: mail.to, subject: mail.subject, file }, 'mail written (no SMTP_URL)');
    },
    close: render.close,
  };
}
