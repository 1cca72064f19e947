-- Niche catalogue (owner: niche). Times are unix microseconds, UTC.

CREATE TABLE niche_signals (
    id TEXT PRIMARY KEY,
    origin TEXT NOT NULL,
    external_id TEXT NOT NULL,
    kind TEXT NOT NULL,
    source_url TEXT NOT NULL,
    source_domain TEXT NOT NULL,
    title TEXT NOT NULL,
    excerpt TEXT NOT NULL,
    observed_at BIGINT NOT NULL,
    collected_at BIGINT NOT NULL,
    license TEXT NOT NULL,
    attribution TEXT NOT NULL,
    engagement TEXT NOT NULL DEFAULT '{}',
    state TEXT NOT NULL,
    moderation_note TEXT NOT NULL DEFAULT '',
    moderated_by TEXT NOT NULL DEFAULT '',
    moderated_at BIGINT NOT NULL DEFAULT 0,
    created_at BIGINT NOT NULL,
    UNIQUE (origin, external_id)
);
CREATE INDEX niche_signals_recent ON niche_signals (created_at DESC, id);
CREATE INDEX niche_signals_state ON niche_signals (state, created_at DESC, id);

CREATE TABLE niche_evaluations (
    seq BIGINT GENERATED ALWAYS AS IDENTITY UNIQUE,
    id TEXT PRIMARY KEY,
    status TEXT NOT NULL,
    revision INTEGER NOT NULL,
    title TEXT NOT NULL,
    problem TEXT NOT NULL,
    buyer TEXT NOT NULL,
    category TEXT NOT NULL,
    category_key TEXT NOT NULL,
    solution_hypothesis TEXT NOT NULL,
    evaluation_notes TEXT NOT NULL,
    pain INTEGER NOT NULL,
    frequency INTEGER NOT NULL,
    willingness_to_pay INTEGER NOT NULL,
    reachable_buyers INTEGER NOT NULL,
    feasibility INTEGER NOT NULL,
    competition_gap INTEGER NOT NULL,
    signal_ids TEXT NOT NULL,
    score INTEGER NOT NULL,
    score_version TEXT NOT NULL,
    score_weights TEXT NOT NULL,
    st TEXT NOT NULL, -- normalised title (niche.SearchText)
    sb TEXT NOT NULL, -- normalised problem, buyer, category
    sc TEXT NOT NULL, -- normalised solution hypothesis
    created_at BIGINT NOT NULL,
    updated_at BIGINT NOT NULL,
    published_at BIGINT NOT NULL DEFAULT 0,
    -- The simple configuration does no stemming and no stop words, so it
    -- matches exactly the words SQLite's unicode61 tokenizer sees in the
    -- same normalised text.
    tsv tsvector GENERATED ALWAYS AS (
        setweight(to_tsvector('simple', st), 'A') ||
        setweight(to_tsvector('simple', sb), 'B') ||
        setweight(to_tsvector('simple', sc), 'C')
    ) STORED
);
ALTER TABLE niche_evaluations ALTER COLUMN tsv SET STATISTICS 1000;
CREATE INDEX niche_eval_tsv ON niche_evaluations USING GIN (tsv) WHERE status = 'published';
CREATE INDEX niche_eval_seq ON niche_evaluations (seq DESC) WHERE status = 'published';
CREATE INDEX niche_eval_by_score ON niche_evaluations (score DESC, updated_at DESC, id) WHERE status = 'published';
CREATE INDEX niche_eval_by_recent ON niche_evaluations (updated_at DESC, id) WHERE status = 'published';
CREATE INDEX niche_eval_cat_score ON niche_evaluations (category_key, score DESC, updated_at DESC, id) WHERE status = 'published';
CREATE INDEX niche_eval_cat_recent ON niche_evaluations (category_key, updated_at DESC, id) WHERE status = 'published';

CREATE TABLE niche_revisions (
    niche_id TEXT NOT NULL,
    revision INTEGER NOT NULL,
    action TEXT NOT NULL,
    actor TEXT NOT NULL,
    reason TEXT NOT NULL,
    operation_id TEXT NOT NULL,
    at BIGINT NOT NULL,
    state TEXT NOT NULL,
    PRIMARY KEY (niche_id, revision)
);

CREATE TABLE niche_operations (
    operation_id TEXT PRIMARY KEY,
    request_hash TEXT NOT NULL,
    niche_id TEXT NOT NULL,
    revision INTEGER NOT NULL,
    created_at BIGINT NOT NULL
);

CREATE TABLE niche_collections (
    origin TEXT NOT NULL,
    started_at BIGINT NOT NULL,
    finished_at BIGINT NOT NULL,
    examined INTEGER NOT NULL,
    added INTEGER NOT NULL,
    duplicates INTEGER NOT NULL,
    status TEXT NOT NULL
);
CREATE INDEX niche_collections_latest ON niche_collections (origin, finished_at DESC);

CREATE TABLE niche_quota (
    caller TEXT NOT NULL,
    day BIGINT NOT NULL,
    used INTEGER NOT NULL,
    PRIMARY KEY (caller, day)
);
CREATE INDEX niche_quota_day ON niche_quota (day);
