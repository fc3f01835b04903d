import http from 'node:http';
import type { AddressInfo } from 'node:net';

/** One span as a collector sees it: ids in hex, the exporting process's `service.name`. */
export interface ReceivedSpan {
  service: string;
  traceId: string;
  spanId: string;
  parentSpanId: string;
  name: string;
  kind: number;
  attributes: Record<string, unknown>;
}

type Field = { number: number; wire: number; value: Buffer | bigint };

/** The protobuf wire format, enough for OTLP: varints, length-delimited fields, fixed 32/64 skipped over. */
function fields(buffer: Buffer): Field[] {
  const out: Field[] = [];
  let at = 0;
  const varint = (): bigint => {
    let result = 0n;
    let shift = 0n;
    for (;;) {
      const byte = buffer[at++];
      result |= BigInt(byte & 0x7f) << shift;
      if ((byte & 0x80) === 0) return result;
      shift += 7n;
    }
  };
  while (at < buffer.length) {
    const key = Number(varint());
    const number = key >> 3;
    const wire = key & 7;
    if (wire === 0) out.push({ number, wire, value: varint() });
    else if (wire === 2) {
      const length = Number(varint());
      out.push({ number, wire, value: buffer.subarray(at, at + length) });
      at += length;
    } else if (wire === 1) {
      out.push({ number, wire, value: buffer.subarray(at, at + 8) });
      at += 8;
    } else if (wire === 5) {
      out.push({ number, wire, value: buffer.subarray(at, at + 4) });
      at += 4;
    } else throw new Error(`unsupported wire type ${wire}`);
  }
  return out;
}

const bytesOf = (all: Field[], number: number) => all.filter((f) => f.number === number).map((f) => f.value as Buffer);
const stringOf = (all: Field[], number: number) => bytesOf(all, number)[0]?.toString('utf8') ?? '';

/** KeyValue{1: key, 2: AnyValue{1: string, 2: bool, 3: int, 4: double}}: the string and integer values. */
function attributesOf(list: Buffer[]): Record<string, unknown> {
  const attributes: Record<string, unknown> = {};
  for (const kv of list) {
    const parts = fields(kv);
    const value = fields(bytesOf(parts, 2)[0] ?? Buffer.alloc(0))[0];
    if (!value) continue;
    attributes[stringOf(parts, 1)] = value.number === 1 ? (value.value as Buffer).toString('utf8') : value.number === 3 ? Number(value.value) : value.value;
  }
  return attributes;
}

/** ExportTraceServiceRequest{1: ResourceSpans{1: Resource{1: attributes}, 2: ScopeSpans{2: Span}}}. */
function decodeProtobuf(body: Buffer): ReceivedSpan[] {
  return bytesOf(fields(body), 1).flatMap((resourceSpans) => {
    const rs = fields(resourceSpans);
    const resource = attributesOf(bytesOf(fields(bytesOf(rs, 1)[0] ?? Buffer.alloc(0)), 1));
    return bytesOf(rs, 2).flatMap((scopeSpans) =>
      bytesOf(fields(scopeSpans), 2).map((span) => {
        const s = fields(span);
        return {
          service: String(resource['service.name']),
          traceId: bytesOf(s, 1)[0].toString('hex'),
          spanId: bytesOf(s, 2)[0].toString('hex'),
          parentSpanId: (bytesOf(s, 4)[0] ?? Buffer.alloc(0)).toString('hex'),
          name: stringOf(s, 5),
          kind: Number(s.find((f) => f.number === 6)?.value ?? 0),
          attributes: attributesOf(bytesOf(s, 9)),
        };
      }),
    );
  });
}

interface JsonValue {
  stringValue?: string;
  intValue?: string | number;
  boolValue?: boolean;
}
interface JsonExport {
  resourceSpans: {
    resource: { attributes: { key: string; value: JsonValue }[] };
    scopeSpans: {
      spans: { traceId: string; spanId: string; parentSpanId?: string; name: string; kind: number; attributes?: { key: string; value: JsonValue }[] }[];
    }[];
  }[];
}

const jsonAttributes = (list: { key: string; value: JsonValue }[] = []) =>
  Object.fromEntries(list.map(({ key, value }) => [key, value.stringValue ?? (value.intValue !== undefined ? Number(value.intValue) : value.boolValue)]));

function decodeJson(body: Buffer): ReceivedSpan[] {
  const parsed = JSON.parse(body.toString('utf8')) as JsonExport;
  return parsed.resourceSpans.flatMap((rs) => {
    const service = String(jsonAttributes(rs.resource.attributes)['service.name']);
    return rs.scopeSpans.flatMap((ss) =>
      ss.spans.map((span) => ({
        service,
        traceId: span.traceId,
        spanId: span.spanId,
        parentSpanId: span.parentSpanId ?? '',
        name: span.name,
        kind: span.kind,
        attributes: jsonAttributes(span.attributes),
      })),
    );
  });
}

/**
 * An OTLP/HTTP trace receiver on loopback: what a collector would get, decoded from either
 * encoding (`application/x-protobuf` or `application/json`), with the encodings seen.
 */
export async function startOtlpReceiver() {
  const spans: ReceivedSpan[] = [];
  const encodings = new Set<string>();
  const server = http.createServer((request, response) => {
    const chunks: Buffer[] = [];
    request.on('data', (chunk: Buffer) => chunks.push(chunk));
    request.on('end', () => {
      const type = String(request.headers['content-type'] ?? '');
      const body = Buffer.concat(chunks);
      if (request.url !== '/v1/traces') return void response.writeHead(404).end();
      encodings.add(type);
      spans.push(...(type.includes('json') ? decodeJson(body) : decodeProtobuf(body)));
      response.writeHead(200, { 'content-type': type.includes('json') ? 'application/json' : 'application/x-protobuf' }).end(type.includes('json') ? '{}' : '');
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    endpoint: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    spans,
    encodings,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
