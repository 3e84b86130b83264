// @ts-check
// The agent's conversations in PostgreSQL, in getsentry/junior's tables:
// each conversation's rows (its event log), appended in seq order, read
// back for the model's history and the reporting route, and copied up to
// a reply for a fork, as Junior's fork copies them.
import { readFile } from 'node:fs/promises';
import pg from 'pg';

/**
 * @typedef {object} Row
 * @property {number} seq
 * @property {string} type
 * @property {string | null} idempotencyKey
 * @property {any} payload
 * @property {Date} createdAt
 */

/**
 * @typedef {object} NewRow
 * @property {string} type
 * @property {string | null} key the idempotency key; a row whose key is there already is not written again
 * @property {any} payload
 */

export class Store {
  /** @param {string} url */
  constructor(url) {
    this.pool = new pg.Pool({ connectionString: url, max: 4 });
  }

  /** Makes the tables (schema.sql). */
  async migrate() {
    await this.pool.query(await readFile(new URL('./schema.sql', import.meta.url), 'utf8'));
  }

  /**
   * Makes the conversation unless it is there.
   * @param {string} id
   * @param {{ source: 'slack' | 'web', channel?: string, thread?: string }} where
   */
  async ensure(id, where) {
    const src = where.source === 'slack'
      ? { platform: 'slack', channelId: where.channel, threadTs: where.thread }
      : { platform: 'web', conversationId: id, visibility: 'private' };
    await this.pool.query(
      `INSERT INTO junior_conversations (conversation_id, source, source_json) VALUES ($1, $2, $3)
       ON CONFLICT (conversation_id) DO NOTHING`,
      [id, where.source, src],
    );
  }

  /** @param {string} id */
  async exists(id) {
    const r = await this.pool.query('SELECT 1 FROM junior_conversations WHERE conversation_id = $1', [id]);
    return r.rowCount === 1;
  }

  /**
   * Appends rows to the conversation's log, one transaction, after its
   * last seq; a row whose idempotency key is there already is skipped.
   * Returns how many it wrote.
   * @param {string} id
   * @param {NewRow[]} rows
   */
  async append(id, rows) {
    const client = await this.pool.connect();
    try {
      await client.query('BEGIN');
      // The conversation's row serializes its writers: seqs never clash.
      await client.query('SELECT 1 FROM junior_conversations WHERE conversation_id = $1 FOR UPDATE', [id]);
      const last = await client.query(
        'SELECT coalesce(max(seq), -1) AS seq, coalesce(max(history_version), 1) AS version FROM junior_conversation_events WHERE conversation_id = $1',
        [id],
      );
      let seq = Number(last.rows[0].seq);
      const version = Number(last.rows[0].version);
      let written = 0;
      for (const r of rows) {
        const res = await client.query(
          `INSERT INTO junior_conversation_events (conversation_id, seq, history_version, schema_version, idempotency_key, type, payload, created_at)
           VALUES ($1, $2, $3, $4, $5, $6, $7, now()) ON CONFLICT (conversation_id, idempotency_key) DO NOTHING`,
          [id, seq + 1, version, r.payload?.schemaVersion === 2 ? 2 : 1, r.key, r.type, r.payload],
        );
        if (res.rowCount === 1) {
          seq++;
          written++;
        }
      }
      await client.query('UPDATE junior_conversations SET last_activity_at = now(), updated_at = now() WHERE conversation_id = $1', [id]);
      await client.query('COMMIT');
      return written;
    } catch (err) {
      await client.query('ROLLBACK').catch(() => {});
      throw err;
    } finally {
      client.release();
    }
  }

  /**
   * The conversation's rows, in seq order.
   * @param {string} id
   * @returns {Promise<Row[]>}
   */
  async rows(id) {
    const r = await this.pool.query(
      'SELECT seq, type, idempotency_key, payload, created_at FROM junior_conversation_events WHERE conversation_id = $1 ORDER BY seq',
      [id],
    );
    return r.rows.map((x) => ({ seq: x.seq, type: x.type, idempotencyKey: x.idempotency_key, payload: x.payload, createdAt: x.created_at }));
  }

  /**
   * Forks the conversation at a reply (its visible message's id) into a new
   * one: the rows up to that message, and after it the handled and
   * terminal rows of the messages and turns copied, so that nothing in the
   * fork stays open. Returns false when the message is no reply of it.
   * @param {string} id
   * @param {string} forkId
   * @param {string} messageId
   */
  async fork(id, forkId, messageId) {
    const rows = await this.rows(id);
    const cut = rows.findIndex((r) => r.type === 'message' && r.payload?.role === 'assistant' && r.payload?.messageId === messageId);
    if (cut < 0) return false;
    const copied = rows.slice(0, cut + 1);
    const messages = new Set(copied.filter((r) => r.type === 'message').map((r) => r.payload.messageId));
    const turns = new Set(copied.filter((r) => r.type === 'turn_started').map((r) => r.payload.turnId));
    for (const r of rows.slice(cut + 1)) {
      if ((r.type === 'message_handled' && messages.has(r.payload?.messageId)) ||
          ((r.type === 'turn_completed' || r.type === 'turn_failed') && turns.has(r.payload?.turnId))) {
        copied.push(r);
      }
    }
    const client = await this.pool.connect();
    try {
      await client.query('BEGIN');
      await client.query(
        `INSERT INTO junior_conversations (conversation_id, source, source_json, title, forked_from_conversation_id)
         SELECT $2, source, source_json, title, conversation_id FROM junior_conversations WHERE conversation_id = $1`,
        [id, forkId],
      );
      // Seqs are kept, gaps and all, as Junior's fork keeps them.
      await client.query(
        `INSERT INTO junior_conversation_events (conversation_id, seq, history_version, schema_version, idempotency_key, type, payload, actor_identity_id, created_at)
         SELECT $2, seq, history_version, schema_version, idempotency_key, type, payload, actor_identity_id, created_at
         FROM junior_conversation_events WHERE conversation_id = $1 AND seq = ANY($3::int[])`,
        [id, forkId, copied.map((r) => r.seq)],
      );
      await client.query('COMMIT');
    } catch (err) {
      await client.query('ROLLBACK').catch(() => {});
      throw err;
    } finally {
      client.release();
    }
    return true;
  }

  async close() {
    await this.pool.end();
  }
}
