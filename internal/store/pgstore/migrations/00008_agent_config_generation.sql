-- +goose Up
-- agent_config_generation counts the changes to the agent configuration
-- (providers, models, configurations, tasks, user budgets). A trigger
-- bumps it inside the writing transaction, whoever writes: t3agent's
-- apply or an operator's own SQL. A process that keeps the configuration
-- it read asks this one row whether it is still current, instead of
-- reading every table for every run.
CREATE TABLE agent_config_generation (
    id         integer PRIMARY KEY CHECK (id = 1),
    generation bigint NOT NULL
);
INSERT INTO agent_config_generation (id, generation) VALUES (1, 1);

-- The triggers fire before each writing statement, so a transaction takes
-- the generation row's lock before any row lock of the configuration
-- tables: two concurrent applies queue on it instead of deadlocking.
-- +goose StatementBegin
CREATE FUNCTION bump_agent_config_generation() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    UPDATE agent_config_generation SET generation = generation + 1 WHERE id = 1;
    RETURN NULL;
END
$$;
-- +goose StatementEnd

CREATE TRIGGER llm_providers_generation BEFORE INSERT OR UPDATE OR DELETE OR TRUNCATE ON llm_providers
    FOR EACH STATEMENT EXECUTE FUNCTION bump_agent_config_generation();
CREATE TRIGGER llm_models_generation BEFORE INSERT OR UPDATE OR DELETE OR TRUNCATE ON llm_models
    FOR EACH STATEMENT EXECUTE FUNCTION bump_agent_config_generation();
CREATE TRIGGER llm_configurations_generation BEFORE INSERT OR UPDATE OR DELETE OR TRUNCATE ON llm_configurations
    FOR EACH STATEMENT EXECUTE FUNCTION bump_agent_config_generation();
CREATE TRIGGER llm_tasks_generation BEFORE INSERT OR UPDATE OR DELETE OR TRUNCATE ON llm_tasks
    FOR EACH STATEMENT EXECUTE FUNCTION bump_agent_config_generation();
CREATE TRIGGER llm_user_budgets_generation BEFORE INSERT OR UPDATE OR DELETE OR TRUNCATE ON llm_user_budgets
    FOR EACH STATEMENT EXECUTE FUNCTION bump_agent_config_generation();

-- +goose Down
DROP TRIGGER llm_user_budgets_generation ON llm_user_budgets;
DROP TRIGGER llm_tasks_generation ON llm_tasks;
DROP TRIGGER llm_configurations_generation ON llm_configurations;
DROP TRIGGER llm_models_generation ON llm_models;
DROP TRIGGER llm_providers_generation ON llm_providers;
DROP FUNCTION bump_agent_config_generation();
DROP TABLE agent_config_generation;
