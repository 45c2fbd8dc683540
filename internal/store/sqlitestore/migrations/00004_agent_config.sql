-- +goose Up
-- The configuration model of the agent runtime (provider → model →
-- configuration → task, and per-user budgets) and its telemetry.
-- Lists and maps are JSON text. API keys and header values are "",
-- "env:NAME" or sealed with the master key: never plaintext. Prices and
-- costs are whole picodollars (1e-12 USD), so cost arithmetic is exact.
CREATE TABLE llm_providers (
    identifier  TEXT NOT NULL PRIMARY KEY,
    description TEXT NOT NULL,
    adapter     TEXT NOT NULL,
    endpoint    TEXT NOT NULL,
    api_key     TEXT NOT NULL,
    trust_zone  TEXT NOT NULL,
    timeout_ms  INTEGER NOT NULL CHECK (timeout_ms >= 0),
    max_retries INTEGER NOT NULL CHECK (max_retries >= 0),
    headers     TEXT NOT NULL,
    active      INTEGER NOT NULL CHECK (active IN (0, 1)),
    created_at  TIMESTAMP NOT NULL,
    updated_at  TIMESTAMP NOT NULL,
    updated_by  TEXT NOT NULL
) WITHOUT ROWID;

CREATE TABLE llm_models (
    identifier        TEXT NOT NULL PRIMARY KEY,
    description       TEXT NOT NULL,
    provider          TEXT NOT NULL REFERENCES llm_providers (identifier),
    model_id          TEXT NOT NULL,
    context_length    INTEGER NOT NULL CHECK (context_length >= 0),
    max_output_tokens INTEGER NOT NULL CHECK (max_output_tokens >= 0),
    capabilities      TEXT NOT NULL,
    input_price       INTEGER CHECK (input_price >= 0),
    output_price      INTEGER CHECK (output_price >= 0),
    active            INTEGER NOT NULL CHECK (active IN (0, 1)),
    created_at        TIMESTAMP NOT NULL,
    updated_at        TIMESTAMP NOT NULL,
    updated_by        TEXT NOT NULL
) WITHOUT ROWID;
CREATE INDEX llm_models_provider ON llm_models (provider);

-- fallback_chain names configurations without a reference: they may be
-- removed later, and the resolver skips what is missing.
CREATE TABLE llm_configurations (
    identifier              TEXT NOT NULL PRIMARY KEY,
    description             TEXT NOT NULL,
    model                   TEXT NOT NULL REFERENCES llm_models (identifier),
    system_prompt           TEXT NOT NULL,
    temperature             REAL,
    max_tokens              INTEGER NOT NULL CHECK (max_tokens >= 0),
    allowed_tool_groups     TEXT NOT NULL,
    guardrails              TEXT NOT NULL,
    require_second_approver INTEGER NOT NULL CHECK (require_second_approver IN (0, 1)),
    max_rounds              INTEGER NOT NULL CHECK (max_rounds >= 0),
    privacy_level           TEXT NOT NULL,
    fallback_chain          TEXT NOT NULL,
    requests_per_day        INTEGER NOT NULL CHECK (requests_per_day >= 0),
    tokens_per_day          INTEGER NOT NULL CHECK (tokens_per_day >= 0),
    cost_per_day            INTEGER NOT NULL CHECK (cost_per_day >= 0),
    requests_per_month      INTEGER NOT NULL CHECK (requests_per_month >= 0),
    tokens_per_month        INTEGER NOT NULL CHECK (tokens_per_month >= 0),
    cost_per_month          INTEGER NOT NULL CHECK (cost_per_month >= 0),
    active                  INTEGER NOT NULL CHECK (active IN (0, 1)),
    created_at              TIMESTAMP NOT NULL,
    updated_at              TIMESTAMP NOT NULL,
    updated_by              TEXT NOT NULL
) WITHOUT ROWID;
CREATE INDEX llm_configurations_model ON llm_configurations (model);

CREATE TABLE llm_tasks (
    identifier      TEXT NOT NULL PRIMARY KEY,
    description     TEXT NOT NULL,
    configuration   TEXT NOT NULL REFERENCES llm_configurations (identifier),
    prompt_template TEXT NOT NULL,
    created_at      TIMESTAMP NOT NULL,
    updated_at      TIMESTAMP NOT NULL,
    updated_by      TEXT NOT NULL
) WITHOUT ROWID;
CREATE INDEX llm_tasks_configuration ON llm_tasks (configuration);

-- Keyed by TYPO3 backend username: the budget outlives a uid change.
CREATE TABLE llm_user_budgets (
    username           TEXT NOT NULL PRIMARY KEY,
    requests_per_day   INTEGER NOT NULL CHECK (requests_per_day >= 0),
    tokens_per_day     INTEGER NOT NULL CHECK (tokens_per_day >= 0),
    cost_per_day       INTEGER NOT NULL CHECK (cost_per_day >= 0),
    requests_per_month INTEGER NOT NULL CHECK (requests_per_month >= 0),
    tokens_per_month   INTEGER NOT NULL CHECK (tokens_per_month >= 0),
    cost_per_month     INTEGER NOT NULL CHECK (cost_per_month >= 0),
    active             INTEGER NOT NULL CHECK (active IN (0, 1)),
    created_at         TIMESTAMP NOT NULL,
    updated_at         TIMESTAMP NOT NULL,
    updated_by         TEXT NOT NULL
) WITHOUT ROWID;

-- One row per provider call, success or failure; never any content.
-- Names are plain text, not references: telemetry outlives the records.
-- NULL tokens or cost: not measured.
CREATE TABLE llm_calls (
    id                      INTEGER PRIMARY KEY AUTOINCREMENT,
    run_id                  TEXT NOT NULL,
    source                  TEXT NOT NULL,
    operation               TEXT NOT NULL,
    username                TEXT NOT NULL,
    requested_configuration TEXT NOT NULL,
    configuration           TEXT NOT NULL,
    fallback_index          INTEGER NOT NULL CHECK (fallback_index >= 0),
    provider                TEXT NOT NULL,
    model                   TEXT NOT NULL,
    model_id                TEXT NOT NULL,
    success                 INTEGER NOT NULL CHECK (success IN (0, 1)),
    error_class             TEXT NOT NULL,
    input_tokens            INTEGER CHECK (input_tokens >= 0),
    output_tokens           INTEGER CHECK (output_tokens >= 0),
    cost                    INTEGER CHECK (cost >= 0),
    latency_ms              INTEGER NOT NULL CHECK (latency_ms >= 0),
    attempts                INTEGER NOT NULL CHECK (attempts >= 0),
    day                     TEXT NOT NULL,
    created_at              TIMESTAMP NOT NULL
);
CREATE INDEX llm_calls_run ON llm_calls (run_id, id);

-- The daily ledger: budgets and the usage readout sum it.
CREATE TABLE llm_usage_daily (
    day           TEXT NOT NULL,
    username      TEXT NOT NULL,
    configuration TEXT NOT NULL,
    provider      TEXT NOT NULL,
    model         TEXT NOT NULL,
    source        TEXT NOT NULL,
    requests      INTEGER NOT NULL,
    errors        INTEGER NOT NULL,
    input_tokens  INTEGER NOT NULL,
    output_tokens INTEGER NOT NULL,
    cost          INTEGER NOT NULL,
    unpriced      INTEGER NOT NULL,
    PRIMARY KEY (day, username, configuration, provider, model, source)
) WITHOUT ROWID;
CREATE INDEX llm_usage_daily_user ON llm_usage_daily (username, day);
CREATE INDEX llm_usage_daily_configuration ON llm_usage_daily (configuration, day);

-- +goose Down
DROP TABLE llm_usage_daily;
DROP TABLE llm_calls;
DROP TABLE llm_user_budgets;
DROP TABLE llm_tasks;
DROP TABLE llm_configurations;
DROP TABLE llm_models;
DROP TABLE llm_providers;
