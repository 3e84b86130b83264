-- getsentry/junior storage, the subset that agentvcr exports and loads:
-- people, identities, conversations and the conversation event log, as in
-- the public schema (drizzle migration 0049 snapshot). Idempotent.
-- destination_id is kept as a plain column: junior_destinations is not part
-- of the subset.

CREATE TABLE IF NOT EXISTS junior_users (
    id text PRIMARY KEY,
    primary_email text,
    primary_email_normalized text,
    display_name text,
    timezone text,
    is_admin boolean NOT NULL DEFAULT false,
    created_at timestamptz NOT NULL DEFAULT now(),
    updated_at timestamptz NOT NULL DEFAULT now()
);
CREATE UNIQUE INDEX IF NOT EXISTS junior_users_primary_email_normalized_idx
    ON junior_users (primary_email_normalized);

CREATE TABLE IF NOT EXISTS junior_identities (
    id text PRIMARY KEY,
    kind text NOT NULL,
    provider text NOT NULL,
    provider_tenant_id text NOT NULL DEFAULT '',
    provider_subject_id text NOT NULL,
    display_name text,
    handle text,
    email text,
    avatar_url text,
    metadata_json jsonb,
    created_at timestamptz NOT NULL DEFAULT now(),
    updated_at timestamptz NOT NULL DEFAULT now(),
    user_id text REFERENCES junior_users (id),
    email_normalized text,
    email_verified boolean NOT NULL DEFAULT false
);
CREATE UNIQUE INDEX IF NOT EXISTS junior_identities_provider_subject_idx
    ON junior_identities (provider, provider_tenant_id, provider_subject_id);
CREATE INDEX IF NOT EXISTS junior_identities_user_idx
    ON junior_identities (user_id);
CREATE INDEX IF NOT EXISTS junior_identities_verified_email_idx
    ON junior_identities (email_normalized)
    WHERE email_verified AND email_normalized IS NOT NULL;
CREATE INDEX IF NOT EXISTS junior_identities_kind_provider_idx
    ON junior_identities (kind, provider);

CREATE TABLE IF NOT EXISTS junior_conversations (
    conversation_id text PRIMARY KEY,
    schema_version integer NOT NULL DEFAULT 1,
    source text,
    source_json jsonb,
    origin_type text,
    origin_id text,
    origin_run_id text,
    location_json jsonb,
    destination_id text,
    destination_json jsonb,
    actor_identity_id text REFERENCES junior_identities (id),
    creator_identity_id text REFERENCES junior_identities (id),
    credential_subject_identity_id text REFERENCES junior_identities (id),
    actor_json jsonb,
    channel_name text,
    title text,
    created_at timestamptz NOT NULL DEFAULT now(),
    last_activity_at timestamptz NOT NULL DEFAULT now(),
    updated_at timestamptz NOT NULL DEFAULT now(),
    execution_updated_at timestamptz,
    execution_status text NOT NULL DEFAULT 'idle',
    run_id text,
    last_checkpoint_at timestamptz,
    last_enqueued_at timestamptz,
    parent_conversation_id text REFERENCES junior_conversations (conversation_id),
    forked_from_conversation_id text REFERENCES junior_conversations (conversation_id) ON DELETE SET NULL,
    root_conversation_id text REFERENCES junior_conversations (conversation_id),
    transcript_purged_at timestamptz,
    duration_ms integer NOT NULL DEFAULT 0,
    usage_json jsonb,
    execution_duration_ms integer NOT NULL DEFAULT 0,
    execution_usage_json jsonb,
    metric_run_id text,
    archived_at timestamptz
);
CREATE INDEX IF NOT EXISTS junior_conversations_last_activity_idx
    ON junior_conversations (last_activity_at DESC, conversation_id);
CREATE INDEX IF NOT EXISTS junior_conversations_active_idx
    ON junior_conversations (coalesce(execution_updated_at, updated_at), conversation_id)
    WHERE execution_status <> 'idle';
CREATE INDEX IF NOT EXISTS junior_conversations_destination_activity_idx
    ON junior_conversations (destination_id, last_activity_at DESC);
CREATE INDEX IF NOT EXISTS junior_conversations_actor_activity_idx
    ON junior_conversations (actor_identity_id, last_activity_at DESC);
CREATE INDEX IF NOT EXISTS junior_conversations_origin_idx
    ON junior_conversations (origin_type, origin_id, last_activity_at DESC);
CREATE INDEX IF NOT EXISTS junior_conversations_parent_idx
    ON junior_conversations (parent_conversation_id);
CREATE INDEX IF NOT EXISTS junior_conversations_forked_from_idx
    ON junior_conversations (forked_from_conversation_id);
CREATE INDEX IF NOT EXISTS junior_conversations_root_idx
    ON junior_conversations (root_conversation_id);

CREATE TABLE IF NOT EXISTS junior_conversation_events (
    conversation_id text NOT NULL REFERENCES junior_conversations (conversation_id),
    seq integer NOT NULL,
    history_version integer NOT NULL,
    schema_version integer NOT NULL DEFAULT 1,
    idempotency_key text,
    type text NOT NULL,
    payload jsonb NOT NULL,
    actor_identity_id text REFERENCES junior_identities (id),
    created_at timestamptz NOT NULL,
    CONSTRAINT junior_conversation_events_conversation_id_seq_pk PRIMARY KEY (conversation_id, seq)
);
CREATE UNIQUE INDEX IF NOT EXISTS junior_conversation_events_idempotency_idx
    ON junior_conversation_events (conversation_id, idempotency_key);
CREATE INDEX IF NOT EXISTS junior_conversation_events_history_version_idx
    ON junior_conversation_events (conversation_id, history_version, seq);
CREATE INDEX IF NOT EXISTS junior_conversation_events_type_idx
    ON junior_conversation_events (conversation_id, type, seq);
CREATE INDEX IF NOT EXISTS junior_conversation_events_actor_identity_idx
    ON junior_conversation_events (actor_identity_id, conversation_id, seq);
CREATE INDEX IF NOT EXISTS junior_conversation_events_message_search_idx
    ON junior_conversation_events USING gin (to_tsvector('english', payload ->> 'text'))
    WHERE type = 'message';
