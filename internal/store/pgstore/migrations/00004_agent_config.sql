-- +goose Up
-- Keys and grouped names use COLLATE "C" so ORDER BY is bytewise, as on SQLite.
-- The configuration model of the agent runtime (provider → model →
-- configuration → task, and per-user budgets) and its telemetry.
-- Lists and maps are JSON text. API keys and header values are "",
-- "env:NAME" or sealed with the master key: never plaintext. Prices and
-- costs are whole picodollars (1e-12 USD), so cost arithmetic is exact.
CREATE TABLE llm_providers (
    identifier  text COLLATE "C" NOT NULL PRIMARY KEY,
    description text NOT NULL,
    adapter     text NOT NULL,
    endpoint    text NOT NULL,
    api_key     text NOT NULL,
    trust_zone  text NOT NULL,
    timeout_ms  bigint NOT NULL CHECK (timeout_ms >= 0),
    max_retries bigint NOT NULL CHECK (max_retries >= 0),
    headers     text NOT NULL,
    active      boolean NOT NULL,
    created_at  timestamptz NOT NULL,
    updated_at  timestamptz NOT NULL,
    updated_by  text NOT NULL
);

CREATE TABLE llm_models (
    identifier        text COLLATE "C" NOT NULL PRIMARY KEY,
    description       text NOT NULL,
    provider          text COLLATE "C" NOT NULL REFERENCES llm_providers (identifier),
    model_id          text NOT NULL,
    context_length    bigint NOT NULL CHECK (context_length >= 0),
    max_output_tokens bigint NOT NULL CHECK (max_output_tokens >= 0),
    capabilities      text NOT NULL,
    input_price       bigint CHECK (input_price >= 0),
    output_price      bigint CHECK (output_price >= 0),
    active            boolean NOT NULL,
    created_at        timestamptz NOT NULL,
    updated_at        timestamptz NOT NULL,
    updated_by        text NOT NULL
);
CREATE INDEX llm_models_provider ON llm_models (provider);

-- fallback_chain names configurations without a reference: they may be
-- removed later, and the resolver skips what is missing.
CREATE TABLE llm_configurations (
    identifier              text COLLATE "C" NOT NULL PRIMARY KEY,
    description             text NOT NULL,
    model                   text COLLATE "C" NOT NULL REFERENCES llm_models (identifier),
    system_prompt           text NOT NULL,
    temperature             double precision,
    max_tokens              bigint NOT NULL CHECK (max_tokens >= 0),
    allowed_tool_groups     text NOT NULL,
    guardrails              text NOT NULL,
    require_second_approver boolean NOT NULL,
    max_rounds              bigint NOT NULL CHECK (max_rounds >= 0),
    privacy_level           text NOT NULL,
    fallback_chain          text NOT NULL,
    requests_per_day        bigint NOT NULL CHECK (requests_per_day >= 0),
    tokens_per_day          bigint NOT NULL CHECK (tokens_per_day >= 0),
    cost_per_day            bigint NOT NULL CHECK (cost_per_day >= 0),
    requests_per_month      bigint NOT NULL CHECK (requests_per_month >= 0),
    tokens_per_month        bigint NOT NULL CHECK (tokens_per_month >= 0),
    cost_per_month          bigint NOT NULL CHECK (cost_per_month >= 0),
    active                  boolean NOT NULL,
    created_at              timestamptz NOT NULL,
    updated_at              timestamptz NOT NULL,
    updated_by              text NOT NULL
);
CREATE INDEX llm_configurations_model ON llm_configurations (model);

CREATE TABLE llm_tasks (
    identifier      text COLLATE "C" NOT NULL PRIMARY KEY,
    description     text NOT NULL,
    configuration   text COLLATE "C" NOT NULL REFERENCES llm_configurations (identifier),
    prompt_template text NOT NULL,
    created_at      timestamptz NOT NULL,
    updated_at      timestamptz NOT NULL,
    updated_by      text NOT NULL
);
CREATE INDEX llm_tasks_configuration ON llm_tasks (configuration);

-- Keyed by TYPO3 backend username: the budget outlives a uid change.
CREATE TABLE llm_user_budgets (
    username           text COLLATE "C" NOT NULL PRIMARY KEY,
    requests_per_day   bigint NOT NULL CHECK (requests_per_day >= 0),
    tokens_per_day     bigint NOT NULL CHECK (tokens_per_day >= 0),
    cost_per_day       bigint NOT NULL CHECK (cost_per_day >= 0),
    requests_per_month bigint NOT NULL CHECK (requests_per_month >= 0),
    tokens_per_month   bigint NOT NULL CHECK (tokens_per_month >= 0),
    cost_per_month     bigint NOT NULL CHECK (cost_per_month >= 0),
    active             boolean NOT NULL,
    created_at         timestamptz NOT NULL,
    updated_at         timestamptz NOT NULL,
    updated_by         text NOT NULL
);

-- One row per provider call, success or failure; never any content.
-- Names are plain text, not references: telemetry outlives the records.
-- NULL tokens or cost: not measured.
CREATE TABLE llm_calls (
    id                      bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    run_id                  text NOT NULL,
    source                  text COLLATE "C" NOT NULL,
    operation               text NOT NULL,
    username                text COLLATE "C" NOT NULL,
    requested_configuration text NOT NULL,
    configuration           text COLLATE "C" NOT NULL,
    fallback_index          bigint NOT NULL CHECK (fallback_index >= 0),
    provider                text COLLATE "C" NOT NULL,
    model                   text COLLATE "C" NOT NULL,
    model_id                text NOT NULL,
    success                 boolean NOT NULL,
    error_class             text NOT NULL,
    input_tokens            bigint CHECK (input_tokens >= 0),
    output_tokens           bigint CHECK (output_tokens >= 0),
    cost                    bigint CHECK (cost >= 0),
    latency_ms              bigint NOT NULL CHECK (latency_ms >= 0),
    attempts                bigint NOT NULL CHECK (attempts >= 0),
    day                     text COLLATE "C" NOT NULL,
    created_at              timestamptz NOT NULL
);
CREATE INDEX llm_calls_run ON llm_calls (run_id, id);

-- The daily ledger: budgets and the usage readout sum it.
CREATE TABLE llm_usage_daily (
    day           text COLLATE "C" NOT NULL,
    username      text COLLATE "C" NOT NULL,
    configuration text COLLATE "C" NOT NULL,
    provider      text COLLATE "C" NOT NULL,
    model         text COLLATE "C" NOT NULL,
    source        text COLLATE "C" NOT NULL,
    requests      bigint NOT NULL,
    errors        bigint NOT NULL,
    input_tokens  bigint NOT NULL,
    output_tokens bigint NOT NULL,
    cost          bigint NOT NULL,
    unpriced      bigint NOT NULL,
    PRIMARY KEY (day, username, configuration, provider, model, source)
);
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
