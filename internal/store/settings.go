package store

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
)

const upsertSetting = `
	INSERT INTO settings (key, value, updated_at) VALUES ($1, $2, $3)
	ON CONFLICT (key) DO UPDATE SET value = excluded.value, updated_at = excluded.updated_at
	RETURNING key, value, updated_at`

func checkSetting(p SetSettingParams) error {
	if err := checkName("setting key", p.Key); err != nil {
		return err
	}
	return checkText(fmt.Sprintf("value of setting %q", p.Key), p.Value, MaxSettingValueLen)
}

func (s *sqlStore) Setting(ctx context.Context, key string) (string, error) {
	if err := checkName("setting key", key); err != nil {
		return "", err
	}
	var v string
	err := s.r.QueryRowContext(ctx, `SELECT value FROM settings WHERE key = $1`, key).Scan(&v)
	if errors.Is(err, sql.ErrNoRows) {
		return "", notFound("setting %q", key)
	}
	if err != nil {
		return "", fmt.Errorf("store: cannot read setting %q: %w", key, err)
	}
	return v, nil
}

func (s *sqlStore) SetSetting(ctx context.Context, p SetSettingParams) (Setting, error) {
	if err := checkSetting(p); err != nil {
		return Setting{}, err
	}
	var out Setting
	err := s.w.QueryRowContext(ctx, upsertSetting, p.Key, p.Value, s.stamp()).
		Scan(&out.Key, &out.Value, timeScanner{&out.UpdatedAt})
	if err != nil {
		return Setting{}, fmt.Errorf("store: cannot save setting %q: %w", p.Key, err)
	}
	return out, nil
}

func (s *sqlStore) SetSettings(ctx context.Context, params []SetSettingParams) ([]Setting, error) {
	seen := make(map[string]bool, len(params))
	for _, p := range params {
		if err := checkSetting(p); err != nil {
			return nil, err
		}
		if seen[p.Key] {
			return nil, invalid("setting %q is given twice", p.Key)
		}
		seen[p.Key] = true
	}
	now := s.stamp()
	out := make([]Setting, len(params))
	err := s.writeTx(ctx, func(tx *sql.Tx) error {
		for i, p := range params {
			err := tx.QueryRowContext(ctx, upsertSetting, p.Key, p.Value, now).
				Scan(&out[i].Key, &out[i].Value, timeScanner{&out[i].UpdatedAt})
			if err != nil {
				return fmt.Errorf("store: cannot save setting %q: %w", p.Key, err)
			}
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	return out, nil
}

func (s *sqlStore) DeleteSetting(ctx context.Context, key string) error {
	if err := checkName("setting key", key); err != nil {
		return err
	}
	res, err := s.w.ExecContext(ctx, `DELETE FROM settings WHERE key = $1`, key)
	if err != nil {
		return fmt.Errorf("store: cannot delete setting %q: %w", key, err)
	}
	return mustAffect(res, "setting %q", key)
}

func (s *sqlStore) Settings(ctx context.Context) ([]Setting, error) {
	rows, err := s.r.QueryContext(ctx, `SELECT key, value, updated_at FROM settings ORDER BY key`)
	if err != nil {
		return nil, fmt.Errorf("store: cannot list settings: %w", err)
	}
	defer rows.Close()
	out := []Setting{}
	for rows.Next() {
		var st Setting
		if err := rows.Scan(&st.Key, &st.Value, timeScanner{&st.UpdatedAt}); err != nil {
			return nil, fmt.Errorf("store: cannot read a setting: %w", err)
		}
		out = append(out, st)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("store: cannot list settings: %w", err)
	}
	return out, nil
}
