/** One schema change: applied once, in order, inside a transaction, and recorded in `<schema>.schema_migrations`. */
export interface Migration {
  version: number;
  description: string;
  /** SQL with `{s}` standing for the quoted schema name and `{channel}` for the append notification channel. */
  sql: string;
}

/** SQLSTATE the append function raises when the stream's lease is held by another owner or epoch. */
export const FENCED_SQLSTATE = 'RE001';
/** SQLSTATE the append function raises when the head is not the expected seq; the message is the actual head. */
export const CONFLICT_SQLSTATE = 'RE002';

/**
 * Every schema change ever made, oldest first. Never edit a released migration: add the next version.
 *
 * 1. The event log: `streams` (head, creation time, fork parent, session status), `records` keyed by (stream, seq)
 *    with the envelope's fields as columns, the codec's encoded bytes (`payload`, opaque to the schema) and a CRC-32 of
 *    them, plus the global order (`transaction_id`, `global_position`); `stream_blobs` and `blobs`
 *    (content-addressed), `snapshots`, `leases` (owner, epoch, expiry), and the `append` function: lease check,
 *    expected-seq check, insert and notify in one statement, so an append is one round trip and one transaction.
 * 2. The session queue `rein worker` runs from: each submitted session's spec, its state and the approval answers
 *    waiting for a worker; `claim` and `release`.
 * 3. `claim` also takes a parked session when it is named (`rein resume` of a session waiting for a person).
 * 4. The chain (docs/architecture.md: *The chain*): each record's chain field (`records.chain`, NULL for records written before
 *    it) and each stream's seal (`streams.seal`: the head it vouches for, 8 bytes, then its tag), both computed by the
 *    writer under its chain key and stored by `append`, which now takes them. The 18-argument `append` is dropped:
 *    a build without the chain fails to append instead of writing unchained records.
 * 5. A session a worker cannot start: `failed` (with its `failure`) when it never will, or back in the queue until
 *    `not_before` (a backoff) when a later try may work; `claim` skips a session until its `not_before`.
 * 6. The writer's running summary of a stream (`AppendOptions.summary`, e.g. the session's usage a listing prices):
 *    `streams.summary` (jsonb) and `streams.summary_seq` (the head it describes), written in the append's transaction
 *    by a 21-argument `append` that runs the 20-argument one, then stores the summary. Existing streams have none
 *    until their next append (a listing folds their log instead); a build before this one keeps appending through
 *    the 20-argument function, leaving the summary behind the head (a listing adds the records after it).
 */
export const migrations: readonly Migration[] = [
  {
    version: 1,
    description: 'event log: streams, records, blobs, snapshots, leases and the append function',
    sql: `
CREATE TABLE {s}.streams (
  stream text PRIMARY KEY,
  head bigint NOT NULL,
  created_at double precision NOT NULL,
  forked_from text,
  forked_at bigint,
  status text
);
CREATE INDEX streams_by_status ON {s}.streams (status, created_at, stream);
CREATE INDEX streams_by_creation ON {s}.streams (created_at, stream);
CREATE TABLE {s}.records (
  stream text NOT NULL,
  seq bigint NOT NULL,
  transaction_id xid8 NOT NULL DEFAULT pg_current_xact_id(),
  global_position bigint GENERATED ALWAYS AS IDENTITY,
  id text NOT NULL,
  type text NOT NULL,
  v integer NOT NULL,
  at double precision NOT NULL,
  actor text NOT NULL,
  cause text,
  corr text,
  payload bytea NOT NULL,
  checksum bigint NOT NULL,
  PRIMARY KEY (stream, seq)
);
CREATE INDEX records_in_global_order ON {s}.records (transaction_id, global_position);
CREATE TABLE {s}.stream_blobs (
  stream text NOT NULL,
  hash text NOT NULL,
  content bytea NOT NULL,
  PRIMARY KEY (stream, hash)
);
CREATE TABLE {s}.blobs (
  hash text PRIMARY KEY,
  content bytea NOT NULL
);
CREATE TABLE {s}.snapshots (
  stream text NOT NULL,
  seq bigint NOT NULL,
  payload bytea NOT NULL,
  checksum bigint NOT NULL,
  PRIMARY KEY (stream, seq)
);
CREATE TABLE {s}.leases (
  stream text PRIMARY KEY,
  owner text,
  epoch bigint NOT NULL DEFAULT 0,
  expires_at timestamptz
);
CREATE FUNCTION {s}.append(
  p_stream text, p_expected bigint, p_owner text, p_epoch bigint, p_created_at double precision, p_durable boolean, p_status text,
  p_ids text[], p_types text[], p_vs integer[], p_ats double precision[], p_actors text[], p_causes text[], p_corrs text[],
  p_payloads bytea[], p_checksums bigint[], p_blob_hashes text[], p_blobs bytea[]
) RETURNS bigint LANGUAGE plpgsql AS $fn$
DECLARE
  v_count integer := coalesce(array_length(p_ids, 1), 0);
  v_head bigint;
  v_owner text;
  v_epoch bigint;
  v_leased boolean;
BEGIN
  IF NOT p_durable THEN
    PERFORM set_config('synchronous_commit', 'off', true);
  END IF;
  -- FOR SHARE: a takeover (which updates the lease row) waits for this append, and this append sees a takeover that
  -- committed first. Either way no record of an old epoch lands after a new epoch began.
  SELECT owner, epoch INTO v_owner, v_epoch FROM {s}.leases WHERE stream = p_stream FOR SHARE;
  v_leased := FOUND AND v_owner IS NOT NULL;
  IF p_owner IS NOT NULL AND (NOT v_leased OR v_owner <> p_owner OR v_epoch <> p_epoch) THEN
    RAISE EXCEPTION USING ERRCODE = '${FENCED_SQLSTATE}', MESSAGE = 'lease lost',
      DETAIL = format('%s holds epoch %s', coalesce(v_owner, 'nobody'), coalesce(v_epoch, 0));
  END IF;
  IF p_owner IS NULL AND v_leased THEN
    RAISE EXCEPTION USING ERRCODE = '${FENCED_SQLSTATE}', MESSAGE = 'stream is leased',
      DETAIL = format('%s holds epoch %s', v_owner, v_epoch);
  END IF;
  IF v_count = 0 THEN
    SELECT head INTO v_head FROM {s}.streams WHERE stream = p_stream;
    v_head := coalesce(v_head, 0);
    IF v_head <> p_expected THEN
      RAISE EXCEPTION USING ERRCODE = '${CONFLICT_SQLSTATE}', MESSAGE = v_head::text;
    END IF;
    RETURN v_head;
  END IF;
  IF p_expected = 0 THEN
    INSERT INTO {s}.streams (stream, head, created_at, status) VALUES (p_stream, v_count, p_created_at, p_status)
      ON CONFLICT (stream) DO NOTHING;
  ELSE
    UPDATE {s}.streams SET head = head + v_count, status = coalesce(p_status, status)
      WHERE stream = p_stream AND head = p_expected;
  END IF;
  IF NOT FOUND THEN
    SELECT head INTO v_head FROM {s}.streams WHERE stream = p_stream;
    RAISE EXCEPTION USING ERRCODE = '${CONFLICT_SQLSTATE}', MESSAGE = coalesce(v_head, 0)::text;
  END IF;
  INSERT INTO {s}.records (stream, seq, id, type, v, at, actor, cause, corr, payload, checksum)
    SELECT p_stream, p_expected + i, p_ids[i], p_types[i], p_vs[i], p_ats[i], p_actors[i], p_causes[i], p_corrs[i], p_payloads[i], p_checksums[i]
    FROM generate_subscripts(p_ids, 1) AS i;
  IF coalesce(array_length(p_blob_hashes, 1), 0) > 0 THEN
    INSERT INTO {s}.stream_blobs (stream, hash, content)
      SELECT p_stream, hash, content FROM unnest(p_blob_hashes, p_blobs) AS blob(hash, content)
      ON CONFLICT DO NOTHING;
  END IF;
  PERFORM pg_notify('{channel}', p_stream);
  RETURN p_expected + v_count;
END
$fn$;
`,
  },
  {
    version: 2,
    description: 'session queue for rein worker: queue table, claim, park and answer functions',
    sql: `
CREATE TABLE {s}.queue (
  session text PRIMARY KEY,
  state text NOT NULL CHECK (state IN ('queued', 'running', 'parked', 'done')),
  spec jsonb NOT NULL,
  answers jsonb NOT NULL DEFAULT '[]',
  enqueued_at timestamptz NOT NULL DEFAULT clock_timestamp(),
  updated_at timestamptz NOT NULL DEFAULT clock_timestamp(),
  claims integer NOT NULL DEFAULT 0
);
CREATE INDEX queue_runnable ON {s}.queue (enqueued_at) WHERE state IN ('queued', 'running');
-- Take the oldest runnable session (queued, or running under an expired lease) or the one named: lease it to p_owner
-- with the next epoch. Rows other claimers hold are skipped, so concurrent workers never wait on each other.
CREATE FUNCTION {s}.claim(p_owner text, p_lease_ms integer, p_session text)
RETURNS TABLE (session text, epoch bigint, spec jsonb, answers jsonb) LANGUAGE plpgsql AS $fn$
DECLARE
  v_session text;
  v_epoch bigint;
BEGIN
  SELECT q.session INTO v_session FROM {s}.queue q LEFT JOIN {s}.leases l ON l.stream = q.session
    WHERE (p_session IS NULL OR q.session = p_session)
      AND (q.state = 'queued' OR (q.state = 'running' AND (l.owner IS NULL OR l.expires_at < clock_timestamp())))
    ORDER BY q.enqueued_at
    LIMIT 1
    FOR UPDATE OF q SKIP LOCKED;
  IF v_session IS NULL THEN
    RETURN;
  END IF;
  INSERT INTO {s}.leases AS l (stream, owner, epoch, expires_at)
    VALUES (v_session, p_owner, 1, clock_timestamp() + p_lease_ms * interval '1 millisecond')
    ON CONFLICT (stream) DO UPDATE SET owner = EXCLUDED.owner, epoch = l.epoch + 1, expires_at = EXCLUDED.expires_at
      WHERE l.owner IS NULL OR l.expires_at < clock_timestamp()
    RETURNING l.epoch INTO v_epoch;
  IF v_epoch IS NULL THEN
    RETURN;
  END IF;
  UPDATE {s}.queue q SET state = 'running', updated_at = clock_timestamp(), claims = q.claims + 1 WHERE q.session = v_session;
  RETURN QUERY SELECT q.session, v_epoch, q.spec, q.answers FROM {s}.queue q WHERE q.session = v_session;
END
$fn$;
-- Let go of a lease: the session becomes 'done', or goes back to the queue ('queued'), or waits for a person
-- ('parked': only when no answer is waiting, else nothing changes and the caller takes the answers). Returns the new
-- state, or NULL when p_owner no longer holds epoch p_epoch.
CREATE FUNCTION {s}.release(p_session text, p_owner text, p_epoch bigint, p_state text)
RETURNS text LANGUAGE plpgsql AS $fn$
DECLARE
  v_waiting integer;
BEGIN
  SELECT jsonb_array_length(q.answers) INTO v_waiting FROM {s}.queue q WHERE q.session = p_session FOR UPDATE;
  PERFORM 1 FROM {s}.leases l WHERE l.stream = p_session AND l.owner = p_owner AND l.epoch = p_epoch FOR UPDATE;
  IF NOT FOUND THEN
    RETURN NULL;
  END IF;
  IF p_state = 'parked' AND coalesce(v_waiting, 0) > 0 THEN
    RETURN 'running';
  END IF;
  UPDATE {s}.leases l SET owner = NULL, expires_at = NULL WHERE l.stream = p_session;
  UPDATE {s}.queue q SET state = p_state, updated_at = clock_timestamp() WHERE q.session = p_session;
  PERFORM pg_notify('{queue_channel}', p_session);
  RETURN p_state;
END
$fn$;
`,
  },
  {
    version: 3,
    description: 'claim a parked session by name (rein resume of a session waiting for a person)',
    sql: `
CREATE OR REPLACE FUNCTION {s}.claim(p_owner text, p_lease_ms integer, p_session text)
RETURNS TABLE (session text, epoch bigint, spec jsonb, answers jsonb) LANGUAGE plpgsql AS $fn$
DECLARE
  v_session text;
  v_epoch bigint;
BEGIN
  SELECT q.session INTO v_session FROM {s}.queue q LEFT JOIN {s}.leases l ON l.stream = q.session
    WHERE (p_session IS NULL OR q.session = p_session)
      AND (q.state = 'queued'
        OR (q.state = 'running' AND (l.owner IS NULL OR l.expires_at < clock_timestamp()))
        OR (p_session IS NOT NULL AND q.state = 'parked'))
    ORDER BY q.enqueued_at
    LIMIT 1
    FOR UPDATE OF q SKIP LOCKED;
  IF v_session IS NULL THEN
    RETURN;
  END IF;
  INSERT INTO {s}.leases AS l (stream, owner, epoch, expires_at)
    VALUES (v_session, p_owner, 1, clock_timestamp() + p_lease_ms * interval '1 millisecond')
    ON CONFLICT (stream) DO UPDATE SET owner = EXCLUDED.owner, epoch = l.epoch + 1, expires_at = EXCLUDED.expires_at
      WHERE l.owner IS NULL OR l.expires_at < clock_timestamp()
    RETURNING l.epoch INTO v_epoch;
  IF v_epoch IS NULL THEN
    RETURN;
  END IF;
  UPDATE {s}.queue q SET state = 'running', updated_at = clock_timestamp(), claims = q.claims + 1 WHERE q.session = v_session;
  RETURN QUERY SELECT q.session, v_epoch, q.spec, q.answers FROM {s}.queue q WHERE q.session = v_session;
END
$fn$;
`,
  },
  {
    version: 4,
    description: 'the chain: records.chain, streams.seal, and append taking them',
    sql: `
ALTER TABLE {s}.records ADD COLUMN chain bytea;
ALTER TABLE {s}.streams ADD COLUMN seal bytea;
DROP FUNCTION {s}.append(text, bigint, text, bigint, double precision, boolean, text, text[], text[], integer[], double precision[], text[], text[], text[], bytea[], bigint[], text[], bytea[]);
CREATE FUNCTION {s}.append(
  p_stream text, p_expected bigint, p_owner text, p_epoch bigint, p_created_at double precision, p_durable boolean, p_status text,
  p_ids text[], p_types text[], p_vs integer[], p_ats double precision[], p_actors text[], p_causes text[], p_corrs text[],
  p_payloads bytea[], p_checksums bigint[], p_blob_hashes text[], p_blobs bytea[], p_chains bytea[], p_seal bytea
) RETURNS bigint LANGUAGE plpgsql AS $fn$
DECLARE
  v_count integer := coalesce(array_length(p_ids, 1), 0);
  v_head bigint;
  v_owner text;
  v_epoch bigint;
  v_leased boolean;
BEGIN
  IF NOT p_durable THEN
    PERFORM set_config('synchronous_commit', 'off', true);
  END IF;
  SELECT owner, epoch INTO v_owner, v_epoch FROM {s}.leases WHERE stream = p_stream FOR SHARE;
  v_leased := FOUND AND v_owner IS NOT NULL;
  IF p_owner IS NOT NULL AND (NOT v_leased OR v_owner <> p_owner OR v_epoch <> p_epoch) THEN
    RAISE EXCEPTION USING ERRCODE = '${FENCED_SQLSTATE}', MESSAGE = 'lease lost',
      DETAIL = format('%s holds epoch %s', coalesce(v_owner, 'nobody'), coalesce(v_epoch, 0));
  END IF;
  IF p_owner IS NULL AND v_leased THEN
    RAISE EXCEPTION USING ERRCODE = '${FENCED_SQLSTATE}', MESSAGE = 'stream is leased',
      DETAIL = format('%s holds epoch %s', v_owner, v_epoch);
  END IF;
  IF v_count = 0 THEN
    SELECT head INTO v_head FROM {s}.streams WHERE stream = p_stream;
    v_head := coalesce(v_head, 0);
    IF v_head <> p_expected THEN
      RAISE EXCEPTION USING ERRCODE = '${CONFLICT_SQLSTATE}', MESSAGE = v_head::text;
    END IF;
    RETURN v_head;
  END IF;
  IF p_expected = 0 THEN
    INSERT INTO {s}.streams (stream, head, created_at, status, seal) VALUES (p_stream, v_count, p_created_at, p_status, p_seal)
      ON CONFLICT (stream) DO NOTHING;
  ELSE
    UPDATE {s}.streams SET head = head + v_count, status = coalesce(p_status, status), seal = p_seal
      WHERE stream = p_stream AND head = p_expected;
  END IF;
  IF NOT FOUND THEN
    SELECT head INTO v_head FROM {s}.streams WHERE stream = p_stream;
    RAISE EXCEPTION USING ERRCODE = '${CONFLICT_SQLSTATE}', MESSAGE = coalesce(v_head, 0)::text;
  END IF;
  INSERT INTO {s}.records (stream, seq, id, type, v, at, actor, cause, corr, payload, checksum, chain)
    SELECT p_stream, p_expected + i, p_ids[i], p_types[i], p_vs[i], p_ats[i], p_actors[i], p_causes[i], p_corrs[i], p_payloads[i], p_checksums[i], p_chains[i]
    FROM generate_subscripts(p_ids, 1) AS i;
  IF coalesce(array_length(p_blob_hashes, 1), 0) > 0 THEN
    INSERT INTO {s}.stream_blobs (stream, hash, content)
      SELECT p_stream, hash, content FROM unnest(p_blob_hashes, p_blobs) AS blob(hash, content)
      ON CONFLICT DO NOTHING;
  END IF;
  PERFORM pg_notify('{channel}', p_stream);
  RETURN p_expected + v_count;
END
$fn$;
`,
  },
  {
    version: 5,
    description: 'a session no worker can start ends failed with its reason; a failed start backs off before the next claim',
    sql: `
ALTER TABLE {s}.queue DROP CONSTRAINT IF EXISTS queue_state_check;
ALTER TABLE {s}.queue ADD CONSTRAINT queue_state_check CHECK (state IN ('queued', 'running', 'parked', 'done', 'failed'));
ALTER TABLE {s}.queue ADD COLUMN failure text;
ALTER TABLE {s}.queue ADD COLUMN not_before timestamptz;
CREATE OR REPLACE FUNCTION {s}.claim(p_owner text, p_lease_ms integer, p_session text)
RETURNS TABLE (session text, epoch bigint, spec jsonb, answers jsonb) LANGUAGE plpgsql AS $fn$
DECLARE
  v_session text;
  v_epoch bigint;
BEGIN
  SELECT q.session INTO v_session FROM {s}.queue q LEFT JOIN {s}.leases l ON l.stream = q.session
    WHERE (p_session IS NULL OR q.session = p_session)
      AND (q.not_before IS NULL OR q.not_before <= clock_timestamp() OR p_session IS NOT NULL)
      AND (q.state = 'queued'
        OR (q.state = 'running' AND (l.owner IS NULL OR l.expires_at < clock_timestamp()))
        OR (p_session IS NOT NULL AND q.state = 'parked'))
    ORDER BY q.enqueued_at
    LIMIT 1
    FOR UPDATE OF q SKIP LOCKED;
  IF v_session IS NULL THEN
    RETURN;
  END IF;
  INSERT INTO {s}.leases AS l (stream, owner, epoch, expires_at)
    VALUES (v_session, p_owner, 1, clock_timestamp() + p_lease_ms * interval '1 millisecond')
    ON CONFLICT (stream) DO UPDATE SET owner = EXCLUDED.owner, epoch = l.epoch + 1, expires_at = EXCLUDED.expires_at
      WHERE l.owner IS NULL OR l.expires_at < clock_timestamp()
    RETURNING l.epoch INTO v_epoch;
  IF v_epoch IS NULL THEN
    RETURN;
  END IF;
  UPDATE {s}.queue q SET state = 'running', updated_at = clock_timestamp(), claims = q.claims + 1, not_before = NULL WHERE q.session = v_session;
  RETURN QUERY SELECT q.session, v_epoch, q.spec, q.answers FROM {s}.queue q WHERE q.session = v_session;
END
$fn$;
-- Let go of a lease after a start that failed: 'failed' with the reason (no later try would do better), or back to
-- 'queued' with the reason, not claimed again for p_delay_ms. Returns the new state, or NULL when the lease was lost.
CREATE FUNCTION {s}.release_failed(p_session text, p_owner text, p_epoch bigint, p_state text, p_failure text, p_delay_ms integer)
RETURNS text LANGUAGE plpgsql AS $fn$
BEGIN
  PERFORM 1 FROM {s}.queue q WHERE q.session = p_session FOR UPDATE;
  PERFORM 1 FROM {s}.leases l WHERE l.stream = p_session AND l.owner = p_owner AND l.epoch = p_epoch FOR UPDATE;
  IF NOT FOUND THEN
    RETURN NULL;
  END IF;
  UPDATE {s}.leases l SET owner = NULL, expires_at = NULL WHERE l.stream = p_session;
  UPDATE {s}.queue q SET state = p_state, failure = p_failure, updated_at = clock_timestamp(),
    not_before = CASE WHEN p_state = 'queued' THEN clock_timestamp() + p_delay_ms * interval '1 millisecond' ELSE NULL END
    WHERE q.session = p_session;
  PERFORM pg_notify('{queue_channel}', p_session);
  RETURN p_state;
END
$fn$;
`,
  },
  {
    version: 6,
    description: 'streams.summary and summary_seq: the writer\'s running summary, stored by a 21-argument append',
    sql: `
ALTER TABLE {s}.streams ADD COLUMN summary jsonb;
ALTER TABLE {s}.streams ADD COLUMN summary_seq bigint;
CREATE FUNCTION {s}.append(
  p_stream text, p_expected bigint, p_owner text, p_epoch bigint, p_created_at double precision, p_durable boolean, p_status text,
  p_ids text[], p_types text[], p_vs integer[], p_ats double precision[], p_actors text[], p_causes text[], p_corrs text[],
  p_payloads bytea[], p_checksums bigint[], p_blob_hashes text[], p_blobs bytea[], p_chains bytea[], p_seal bytea, p_summary jsonb
) RETURNS bigint LANGUAGE plpgsql AS $fn$
DECLARE
  v_head bigint;
BEGIN
  v_head := {s}.append(p_stream, p_expected, p_owner, p_epoch, p_created_at, p_durable, p_status, p_ids, p_types, p_vs, p_ats,
    p_actors, p_causes, p_corrs, p_payloads, p_checksums, p_blob_hashes, p_blobs, p_chains, p_seal);
  IF p_summary IS NOT NULL AND v_head > p_expected THEN
    UPDATE {s}.streams SET summary = p_summary, summary_seq = v_head WHERE stream = p_stream;
  END IF;
  RETURN v_head;
END
$fn$;
`,
  },
];

/** The newest schema version this build knows. */
export const schemaVersion = migrations[migrations.length - 1]!.version;
