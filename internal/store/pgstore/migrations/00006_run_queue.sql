-- +goose Up
-- Durable runs: a queued run keeps its sealed request until a worker
-- claims it; available_at delays a requeued run (backoff), requeue_count
-- bounds how often the reaper gives it another try.
ALTER TABLE runs ADD COLUMN queued_request text;
ALTER TABLE runs ADD COLUMN requeue_count integer NOT NULL DEFAULT 0 CHECK (requeue_count >= 0);
ALTER TABLE runs ADD COLUMN available_at timestamptz;
CREATE INDEX runs_queue ON runs (status, available_at, created_at, id);

-- +goose Down
DROP INDEX runs_queue;
ALTER TABLE runs DROP COLUMN available_at;
ALTER TABLE runs DROP COLUMN requeue_count;
ALTER TABLE runs DROP COLUMN queued_request;
