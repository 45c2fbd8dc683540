-- +goose Up
-- agent_config_generation counts the changes to the agent configuration
-- (providers, models, configurations, tasks, user budgets). Triggers bump
-- it inside the writing transaction, whoever writes: t3agent's apply or an
-- operator's own SQL. A process that keeps the configuration it read asks
-- this one row whether it is still current, instead of reading every
-- table for every run.
CREATE TABLE agent_config_generation (
    id         INTEGER PRIMARY KEY CHECK (id = 1),
    generation INTEGER NOT NULL
);
INSERT INTO agent_config_generation (id, generation) VALUES (1, 1);

-- +goose StatementBegin
CREATE TRIGGER llm_providers_generation_insert AFTER INSERT ON llm_providers BEGIN
    UPDATE agent_config_generation SET generation = generation + 1 WHERE id = 1;
END;
-- +goose StatementEnd

-- +goose StatementBegin
CREATE TRIGGER llm_providers_generation_update AFTER UPDATE ON llm_providers BEGIN
    UPDATE agent_config_generation SET generation = generation + 1 WHERE id = 1;
END;
-- +goose StatementEnd

-- +goose StatementBegin
CREATE TRIGGER llm_providers_generation_delete AFTER DELETE ON llm_providers BEGIN
    UPDATE agent_config_generation SET generation = generation + 1 WHERE id = 1;
END;
-- +goose StatementEnd

-- +goose StatementBegin
CREATE TRIGGER llm_models_generation_insert AFTER INSERT ON llm_models BEGIN
    UPDATE agent_config_generation SET generation = generation + 1 WHERE id = 1;
END;
-- +goose StatementEnd

-- +goose StatementBegin
CREATE TRIGGER llm_models_generation_update AFTER UPDATE ON llm_models BEGIN
    UPDATE agent_config_generation SET generation = generation + 1 WHERE id = 1;
END;
-- +goose StatementEnd

-- +goose StatementBegin
CREATE TRIGGER llm_models_generation_delete AFTER DELETE ON llm_models BEGIN
    UPDATE agent_config_generation SET generation = generation + 1 WHERE id = 1;
END;
-- +goose StatementEnd

-- +goose StatementBegin
CREATE TRIGGER llm_configurations_generation_insert AFTER INSERT ON llm_configurations BEGIN
    UPDATE agent_config_generation SET generation = generation + 1 WHERE id = 1;
END;
-- +goose StatementEnd

-- +goose StatementBegin
CREATE TRIGGER llm_configurations_generation_update AFTER UPDATE ON llm_configurations BEGIN
    UPDATE agent_config_generation SET generation = generation + 1 WHERE id = 1;
END;
-- +goose StatementEnd

-- +goose StatementBegin
CREATE TRIGGER llm_configurations_generation_delete AFTER DELETE ON llm_configurations BEGIN
    UPDATE agent_config_generation SET generation = generation + 1 WHERE id = 1;
END;
-- +goose StatementEnd

-- +goose StatementBegin
CREATE TRIGGER llm_tasks_generation_insert AFTER INSERT ON llm_tasks BEGIN
    UPDATE agent_config_generation SET generation = generation + 1 WHERE id = 1;
END;
-- +goose StatementEnd

-- +goose StatementBegin
CREATE TRIGGER llm_tasks_generation_update AFTER UPDATE ON llm_tasks BEGIN
    UPDATE agent_config_generation SET generation = generation + 1 WHERE id = 1;
END;
-- +goose StatementEnd

-- +goose StatementBegin
CREATE TRIGGER llm_tasks_generation_delete AFTER DELETE ON llm_tasks BEGIN
    UPDATE agent_config_generation SET generation = generation + 1 WHERE id = 1;
END;
-- +goose StatementEnd

-- +goose StatementBegin
CREATE TRIGGER llm_user_budgets_generation_insert AFTER INSERT ON llm_user_budgets BEGIN
    UPDATE agent_config_generation SET generation = generation + 1 WHERE id = 1;
END;
-- +goose StatementEnd

-- +goose StatementBegin
CREATE TRIGGER llm_user_budgets_generation_update AFTER UPDATE ON llm_user_budgets BEGIN
    UPDATE agent_config_generation SET generation = generation + 1 WHERE id = 1;
END;
-- +goose StatementEnd

-- +goose StatementBegin
CREATE TRIGGER llm_user_budgets_generation_delete AFTER DELETE ON llm_user_budgets BEGIN
    UPDATE agent_config_generation SET generation = generation + 1 WHERE id = 1;
END;
-- +goose StatementEnd

-- +goose Down
DROP TRIGGER llm_user_budgets_generation_delete;
DROP TRIGGER llm_user_budgets_generation_update;
DROP TRIGGER llm_user_budgets_generation_insert;
DROP TRIGGER llm_tasks_generation_delete;
DROP TRIGGER llm_tasks_generation_update;
DROP TRIGGER llm_tasks_generation_insert;
DROP TRIGGER llm_configurations_generation_delete;
DROP TRIGGER llm_configurations_generation_update;
DROP TRIGGER llm_configurations_generation_insert;
DROP TRIGGER llm_models_generation_delete;
DROP TRIGGER llm_models_generation_update;
DROP TRIGGER llm_models_generation_insert;
DROP TRIGGER llm_providers_generation_delete;
DROP TRIGGER llm_providers_generation_update;
DROP TRIGGER llm_providers_generation_insert;
DROP TABLE agent_config_generation;
