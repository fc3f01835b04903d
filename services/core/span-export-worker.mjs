// The OTLP/HTTP export's network half, in a thread of its own (span-export-thread.ts says why): the
// standard exporter's transport, configured by the same OTEL_EXPORTER_OTLP_* variables (the thread
// inherits the process's environment), sends the request the main thread serialized.
import { parentPort, workerData } from 'node:worker_threads';
import { convertLegacyHttpOptions, createOtlpHttpExportDelegate } from '@opentelemetry/otlp-exporter-base/node-http';
import { JsonTraceSerializer, ProtobufTraceSerializer } from '@opentelemetry/otlp-transformer';

const { json } = workerData;
const serializer = json ? JsonTraceSerializer : ProtobufTraceSerializer;
const delegate = createOtlpHttpExportDelegate(
  convertLegacyHttpOptions({}, 'TRACES', 'v1/traces', { 'Content-Type': json ? 'application/json' : 'application/x-protobuf' }),
  { serializeRequest: (request) => request.bytes, deserializeResponse: (data) => serializer.deserializeResponse(data) },
  'otlp_http_span_exporter',
  { name: 'span', countItems: (request) => request.count },
  undefined,
);

parentPort.on('message', (message) => {
  // Messages are answered in order, so a flush's answer follows every export posted before it.
  if (message.flush || message.shutdown) {
    (message.shutdown ? delegate.shutdown() : delegate.forceFlush()).then(
      () => parentPort.postMessage({ id: message.id, code: 0 }),
      () => parentPort.postMessage({ id: message.id, code: 1 }),
    );
    return;
  }
  delegate.export({ bytes: message.bytes, count: message.count }, (result) =>
    parentPort.postMessage({ id: message.id, code: result.code, error: result.error ? String(result.error.message ?? result.error) : undefined }),
  );
});
