import { SMTPServer } from 'smtp-server';
import type { AddressInfo } from 'node:net';

export interface ReceivedMail {
  to: string[];
  raw: string;
  subject: string;
  messageId: string;
  /** The text body decoded (quoted-printable undone), for finding links. */
  text: string;
}

/** Undoes quoted-printable (soft breaks and =XX), which nodemailer uses for long lines. */
const decodeQuotedPrintable = (text: string) =>
  text.replace(/=\r?\n/g, '').replace(/=([0-9A-F]{2})/g, (_, hex: string) => String.fromCharCode(parseInt(hex, 16)));

/**
 * A real SMTP server on loopback (the smtp-server package) that keeps every message it accepted.
 * `stop()` closes it (the port refuses connections), `start()` listens again on the same port.
 */
export async function startSmtpSink(port = 0) {
  const received: ReceivedMail[] = [];
  let server: SMTPServer | null = null;
  let boundPort = port;
  const listen = async () => {
    server = new SMTPServer({
      authOptional: true,
      disabledCommands: ['STARTTLS', 'AUTH'],
      logger: false,
      onData(stream, session, callback) {
        const chunks: Buffer[] = [];
        stream.on('data', (chunk: Buffer) => chunks.push(chunk));
        stream.on('end', () => {
          const raw = Buffer.concat(chunks).toString('utf8');
          const header = (name: string) => new RegExp(`^${name}:\\s*(.*)$`, 'im').exec(raw)?.[1]?.trim() ?? '';
          received.push({
            to: session.envelope.rcptTo.map((r) => r.address),
            raw,
            subject: header('Subject'),
            messageId: header('Message-ID'),
            text: decodeQuotedPrintable(raw),
          });
          callback();
        });
      },
    });
    await new Promise<void>((resolve, reject) => {
      server!.once('error', reject);
      server!.listen(boundPort, '127.0.0.1', () => resolve());
    });
    boundPort = ((server as unknown as { server: { address(): AddressInfo } }).server.address() as AddressInfo).port;
  };
  await listen();
  return {
    received,
    get url() {
      return `smtp://127.0.0.1:${boundPort}`;
    },
    /** Mails to `address` so far. */
    to: (address: string) => received.filter((mail) => mail.to.includes(address.toLowerCase())),
    async stop() {
      const closing = server;
      server = null;
      if (closing) await new Promise<void>((resolve) => closing.close(() => resolve()));
    },
    start: listen,
  };
}

/** The single-use link (with its `?token=`) a mail carries for `page`, and the token. */
export function linkIn(mail: ReceivedMail, page: string): { url: string; token: string } {
  const match = new RegExp(`(https?://[^\\s"<>]*/admin/${page}\\?token=([A-Za-z0-9._%-]+))`).exec(mail.text);
  if (!match) throw new Error(`no ${page} link in mail: ${mail.text.slice(0, 2000)}`);
  return { url: match[1], token: decodeURIComponent(match[2]) };
}
