-- The reference agent's tables, as its migrations make them. Idempotent.
--
-- The conversation tables are getsentry/junior's, with Junior's names
-- and columns (migration 0049): the conversations, their event log, and
-- the people and identities a conversation's rows refer to, so that a
-- conversation exported from Junior loads here and one of the agent's
-- exports loads there. Of the indexes, the agent makes those it needs. Automations and credentials, which Junior keeps elsewhere, are
-- the agent's own.

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
-- Appends skip a key already present: ON CONFLICT needs this index.
CREATE UNIQUE INDEX IF NOT EXISTS junior_conversation_events_idempotency_idx
    ON junior_conversation_events (conversation_id, idempotency_key);

CREATE TABLE IF NOT EXISTS agent_automations (
    id text PRIMARY KEY,
    team_id text NOT NULL,
    channel_id text NOT NULL,
    task text NOT NULL,
    interval_seconds integer NOT NULL,
    next_run_at timestamptz NOT NULL
);

CREATE TABLE IF NOT EXISTS agent_credentials (
    subject text NOT NULL,
    provider text NOT NULL,
    token text NOT NULL,
    created_at timestamptz NOT NULL DEFAULT now(),
    PRIMARY KEY (subject, provider)
);

-- Events the agent received (GitHub webhooks, the event ingest), once
-- each: a delivery seen again is a duplicate.
CREATE TABLE IF NOT EXISTS agent_events (
    source text NOT NULL,
    id text NOT NULL,
    type text NOT NULL,
    resource text NOT NULL DEFAULT '',
    payload text, -- as received: jsonb would refuse a \u0000 in a string
    received_at timestamptz NOT NULL DEFAULT now(),
    PRIMARY KEY (source, id)
);

-- Event automations run a task when an event matches; watches tell a
-- conversation of its resource's events. An empty type or resource takes
-- any.
CREATE TABLE IF NOT EXISTS agent_event_automations (
    id text PRIMARY KEY,
    source text NOT NULL,
    type text NOT NULL DEFAULT '',
    resource text NOT NULL DEFAULT '',
    task text NOT NULL,
    team_id text NOT NULL,
    channel_id text NOT NULL,
    created_at timestamptz NOT NULL DEFAULT now()
);

CREATE TABLE IF NOT EXISTS agent_watches (
    id text PRIMARY KEY,
    conversation_id text NOT NULL REFERENCES junior_conversations (conversation_id) ON DELETE CASCADE,
    source text NOT NULL,
    type text NOT NULL DEFAULT '',
    resource text NOT NULL,
    intent text NOT NULL DEFAULT '',
    created_at timestamptz NOT NULL DEFAULT now()
);

-- How many automated inputs each conversation has had since a person's
-- last message (the seq of that message, -1 for none): past
-- AGENT_AUTOMATED_TURN_LIMIT, they are not run.
CREATE TABLE IF NOT EXISTS agent_automated_turns (
    conversation_id text PRIMARY KEY,
    person_seq integer NOT NULL,
    count integer NOT NULL
);

-- A scheduled automation whose runs are a user's web conversations, by
-- email; its team_id and channel_id are then ''.
ALTER TABLE agent_automations ADD COLUMN IF NOT EXISTS web_user_email text;

-- Memories, the memory plugin's (Junior's junior_memory_memories, cut to
-- what the agent reads): a user memory (subject_key the user's email,
-- lowercased) is recalled in that user's turns, a general one (subject_key
-- '') in every turn. source says who wrote it: admin (a test or an
-- operator) or extraction (the plugin, after a turn of conversation_id).
CREATE TABLE IF NOT EXISTS agent_memories (
    id text PRIMARY KEY,
    subject_type text NOT NULL CHECK (subject_type IN ('user', 'general')),
    subject_key text NOT NULL DEFAULT '',
    content text NOT NULL,
    source text NOT NULL,
    conversation_id text,
    created_at timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX IF NOT EXISTS agent_memories_subject_idx ON agent_memories (subject_type, subject_key, created_at);
