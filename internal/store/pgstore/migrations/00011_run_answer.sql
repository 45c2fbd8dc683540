-- +goose Up
-- The final answer of a run whose caller keeps it (the chat): its text
-- and the text the model wrote beside its tool calls, as JSON, written
-- when the run completes. A conversation whose run was decided elsewhere
-- (the runs API, the CLI, another process) takes its answer from here.
-- NULL for every other run: at privacy level metadata a run keeps no
-- content, and a caller that keeps its answer stores it anyway.
ALTER TABLE runs ADD COLUMN answer TEXT;

-- +goose Down
ALTER TABLE runs DROP COLUMN answer;
