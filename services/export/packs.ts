import { Binary, type Db } from 'mongodb';
import { docId, PACK_BYTES, prefixed, sha256 } from './files.ts';
import { exportPacks, toJson, type ExportPackDoc, type StoredFile } from './model.ts';
import { isDuplicateKey } from '../core/mongo-errors.ts';

/** A file on its way into packs: the rendered text (or bytes) as produced, never copied first. */
export interface NewFile {
  path: string;
  contentType: string;
  body: string | Buffer;
  entryId: string | null;
}

/**
 * Lays files out in packs `<siteId>:<generation>:<prefix>:<n>` as they come: small files share a
 * pack, a file bigger than a pack gets packs of its own (its listing entry sits in the first).
 * Pure. Small files are encoded straight into a pack-sized buffer, so a page costs no Buffer of
 * its own and no concatenation (one copy of its bytes instead of three).
 * Two such buffers take turns: a pack handed out by `add` or `end` borrows one while the packer
 * fills the other, so its bytes must be written (or copied) before the next call.
 */
export class Packer {
  readonly stored: StoredFile[] = [];
  private readonly buffers: Buffer[] = [];
  private turn = 0;
  private size = 0;
  private listed: StoredFile[] = [];
  private count = 0;

  constructor(
    private readonly siteId: string,
    private readonly generation: number,
    private readonly prefix: string,
    private readonly runId: string,
    private readonly mtime: number,
  ) {}

  private nextId() {
    return docId(this.siteId, this.generation, `${this.prefix}:${String(this.count).padStart(5, '0')}`);
  }

  private get buffer(): Buffer {
    // The second buffer only once a first pack is full (most site page sets fit in one).
    return (this.buffers[this.turn] ??= Buffer.allocUnsafe(PACK_BYTES));
  }

  private flush(out: ExportPackDoc[]) {
    if (this.listed.length === 0) return;
    out.push({
      _id: this.nextId(),
      siteId: this.siteId,
      generation: this.generation,
      files: toJson(this.listed),
      data: new Binary(this.buffer.subarray(0, this.size)),
    });
    this.turn = 1 - this.turn;
    this.count += 1;
    this.listed = [];
    this.size = 0;
  }

  /** Adds a file; answers the packs it completed (the pack it did not fit in, and a big file's own). */
  add(file: NewFile): ExportPackDoc[] {
    const out: ExportPackDoc[] = [];
    const length = typeof file.body === 'string' ? Buffer.byteLength(file.body, 'utf8') : file.body.length;
    const base = { path: file.path, contentType: file.contentType, length, mtime: this.mtime, runId: this.runId, entryId: file.entryId };
    if (length > PACK_BYTES) {
      this.flush(out);
      const body = typeof file.body === 'string' ? Buffer.from(file.body, 'utf8') : file.body;
      // Its parts are known before any pack is listed: the listing is serialised with the pack.
      const parts: [string, number, number][] = [];
      for (let offset = 0; offset < length; offset += PACK_BYTES) {
        parts.push([
          docId(this.siteId, this.generation, `${this.prefix}:${String(this.count + parts.length).padStart(5, '0')}`),
          0,
          Math.min(PACK_BYTES, length - offset),
        ]);
      }
      const entry: StoredFile = { ...base, sha: sha256(body), parts, slot: 0 };
      for (const [n, [id]] of parts.entries()) {
        out.push({
          _id: id,
          siteId: this.siteId,
          generation: this.generation,
          files: toJson(n === 0 ? [entry] : []),
          data: new Binary(body.subarray(n * PACK_BYTES, (n + 1) * PACK_BYTES)),
        });
      }
      this.count += parts.length;
      this.stored.push(entry);
      return out;
    }
    if (this.size + length > PACK_BYTES) this.flush(out);
    const at = this.size;
    if (typeof file.body === 'string') this.buffer.write(file.body, at, 'utf8');
    else file.body.copy(this.buffer, at);
    this.size += length;
    const entry: StoredFile = { ...base, sha: sha256(this.buffer.subarray(at, at + length)), parts: [[this.nextId(), at, length]], slot: this.listed.length };
    this.listed.push(entry);
    this.stored.push(entry);
    return out;
  }

  /** The last, partly filled pack. */
  end(): ExportPackDoc[] {
    const out: ExportPackDoc[] = [];
    this.flush(out);
    return out;
  }
}

/**
 * Writes files as packs under `prefix` as they are added, one insert per completed pack (the
 * packer's buffer is reused once the insert is done). A retried step meets its own earlier attempt
 * (duplicate ids): then what that attempt wrote under the prefix goes first (it may have had more
 * packs). Range deletes are not free on the local engine, so a first attempt does none.
 */
export class PackStager {
  private readonly packer: Packer;
  private written = 0;

  constructor(
    private readonly db: Db,
    private readonly siteId: string,
    private readonly generation: number,
    private readonly prefix: string,
    runId: string,
  ) {
    this.packer = new Packer(siteId, generation, prefix, runId, Date.now());
  }

  private async write(packs: ExportPackDoc[]) {
    for (const pack of packs) {
      try {
        await exportPacks(this.db).insertOne(pack);
      } catch (error) {
        // Our own packs of this attempt have unique ids: only the first can meet an earlier attempt's.
        if (!isDuplicateKey(error) || this.written > 0) throw error;
        await exportPacks(this.db).deleteMany(prefixed(this.siteId, this.generation, this.prefix));
        await exportPacks(this.db).insertOne(pack);
      }
      this.written += 1;
    }
  }

  async add(file: NewFile): Promise<void> {
    await this.write(this.packer.add(file));
  }

  /** Writes the last pack; answers every file staged, in the order added. */
  async end(): Promise<StoredFile[]> {
    await this.write(this.packer.end());
    // Nothing written: an earlier attempt may still have written packs here (its entries changed since).
    if (this.written === 0) await exportPacks(this.db).deleteMany(prefixed(this.siteId, this.generation, this.prefix));
    return this.packer.stored;
  }
}
