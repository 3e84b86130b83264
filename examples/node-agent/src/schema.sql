-- The agent's tables: getsentry/junior's conversation tables, with
-- Junior's names and the columns its rows and a loaded history use, so
-- that a conversation exported from Junior loads here (recorder load, the
-- test fixture's history) and the agent reads it as its own. Idempotent.

CREATE TABLE IF NOT EXISTS junior_users (
    id text PRIMARY KEY,
    primary_email text,
    primary_email_normalized text UNIQUE,
    display_name text,
    timezone text,
    is_admin boolean NOT NULL DEFAULT false,
    created_at timestamptz NOT NULL DEFAULT now(),
    updated_at timestamptz NOT NULL DEFAULT now()
);

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
    email_verified boolean NOT NULL DEFAULT false,
    UNIQUE (provider, provider_tenant_id, provider_subject_id)
);

CREATE TABLE IF NOT EXISTS junior_conversations (
    conversation_id text PRIMARY KEY,
    schema_version integer NOT NULL DEFAULT 1,
    source text,
    source_json jsonb,
    destination_json jsonb,
    title text,
    created_at timestamptz NOT NULL DEFAULT now(),
    last_activity_at timestamptz NOT NULL DEFAULT now(),
    updated_at timestamptz NOT NULL DEFAULT now(),
    execution_status text NOT NULL DEFAULT 'idle',
    forked_from_conversation_id text REFERENCES junior_conversations (conversation_id) ON DELETE SET NULL,
    duration_ms integer NOT NULL DEFAULT 0,
    execution_duration_ms integer NOT NULL DEFAULT 0
);

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
    PRIMARY KEY (conversation_id, seq)
);
CREATE UNIQUE INDEX IF NOT EXISTS junior_conversation_events_idempotency_idx
    ON junior_conversation_events (conversation_id, idempotency_key);
