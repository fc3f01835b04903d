import { Worker } from 'node:worker_threads';
import { ExportResultCode, type ExportResult } from '@opentelemetry/core';
import { JsonTraceSerializer, ProtobufTraceSerializer } from '@opentelemetry/otlp-transformer';
import type { ReadableSpan, SpanExporter } from '@opentelemetry/sdk-trace-base';

/**
 * The OTLP/HTTP span exporter whose HTTP requests leave from a thread of its own
 * (span-export-worker.mjs, the standard exporter's transport and its OTEL_EXPORTER_OTLP_*
 * settings): the main thread serializes a batch and posts the bytes.
 *
 * Why (bench/RESULTS.md, "Metrics and traces on against off", session 11): an `http.request` from
 * the main thread, however rare, can leave the process's HTTP server spending more CPU on every
 * answer for the rest of its life (a third more in a minimal server; 6–11 % of the traced
 * gateway's cache-lane answer). The client runs Node's shared internals (`process.nextTick`'s tick
 * objects, the HTTP and stream machinery) with shapes and arguments the server never uses, and V8
 * re-optimizes them for both. A request sent from another isolate leaves the main one's alone.
 */
export class ThreadedOtlpSpanExporter implements SpanExporter {
  private readonly worker: Worker;
  private readonly serializer: typeof ProtobufTraceSerializer | typeof JsonTraceSerializer;
  private readonly pending = new Map<number, (result: ExportResult) => void>();
  private nextId = 0;
  /** Why the thread is gone, once it is: what is sent after that fails at once (a drain must not wait on it). */
  private gone: Error | null = null;

  constructor(protocol: 'http/protobuf' | 'http/json') {
    const json = protocol === 'http/json';
    this.serializer = json ? JsonTraceSerializer : ProtobufTraceSerializer;
    this.worker = new Worker(new URL('./span-export-worker.mjs', import.meta.url), { workerData: { json } });
    // An idle exporter keeps no process alive; a drain waits for it through shutdown().
    this.worker.unref();
    this.worker.on('message', (message: { id: number; code: ExportResultCode; error?: string }) => {
      const done = this.pending.get(message.id);
      this.pending.delete(message.id);
      done?.({ code: message.code, ...(message.error ? { error: new Error(message.error) } : {}) });
    });
    this.worker.on('error', (error) => this.failAll(error));
    this.worker.on('exit', () => {
      this.gone ??= new Error('the span export thread stopped');
      this.failAll(this.gone);
    });
  }

  export(spans: ReadableSpan[], resultCallback: (result: ExportResult) => void): void {
    const bytes = this.serializer.serializeRequest(spans);
    if (!bytes) return resultCallback({ code: ExportResultCode.FAILED, error: new Error('spans could not be serialized') });
    this.send({ bytes, count: spans.length }, resultCallback);
  }

  /** Waits for the exports already posted (the thread answers each). */
  forceFlush(): Promise<void> {
    return new Promise((resolve) => this.send({ flush: true }, () => resolve()));
  }

  async shutdown(): Promise<void> {
    await new Promise<void>((resolve) => this.send({ shutdown: true }, () => resolve()));
    await this.worker.terminate();
  }

  private send(message: Record<string, unknown>, done: (result: ExportResult) => void): void {
    if (this.gone) return done({ code: ExportResultCode.FAILED, error: this.gone });
    const id = this.nextId++;
    this.pending.set(id, done);
    this.worker.postMessage({ ...message, id });
  }

  private failAll(error: Error): void {
    for (const done of this.pending.values()) done({ code: ExportResultCode.FAILED, error });
    this.pending.clear();
  }
}
