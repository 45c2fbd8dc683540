package store

import (
	"context"
	"database/sql"
	"fmt"
	"slices"
	"strings"
	"time"
)

// Tool and group overrides have the same shape, so one set of statements
// serves both tables; only the table name and the wording of errors differ.
type overrideTable int

const (
	toolTable overrideTable = iota
	groupTable
)

// name is a constant per table, never caller input, so it may be spliced
// into SQL.
func (t overrideTable) name() string {
	if t == groupTable {
		return "tool_group_overrides"
	}
	return "tool_overrides"
}

func (t overrideTable) noun() string {
	if t == groupTable {
		return "tool group"
	}
	return "tool"
}

type overrideRow struct {
	name      string
	enabled   bool
	updatedAt time.Time
	updatedBy string
}

func (s *sqlStore) setOverride(ctx context.Context, t overrideTable, name string, enabled bool, by string) (overrideRow, error) {
	if err := checkName(t.noun()+" name", name); err != nil {
		return overrideRow{}, err
	}
	if err := checkName("actor (UpdatedBy)", by); err != nil {
		return overrideRow{}, err
	}
	var r overrideRow
	err := s.w.QueryRowContext(ctx, `
		INSERT INTO `+t.name()+` (name, enabled, updated_at, updated_by)
		VALUES ($1, $2, $3, $4)
		ON CONFLICT (name) DO UPDATE
		SET enabled = excluded.enabled, updated_at = excluded.updated_at, updated_by = excluded.updated_by
		RETURNING name, enabled, updated_at, updated_by`,
		name, enabled, s.stamp(), by,
	).Scan(&r.name, &r.enabled, timeScanner{&r.updatedAt}, &r.updatedBy)
	if err != nil {
		return overrideRow{}, fmt.Errorf("store: cannot save the override of %s %q: %w", t.noun(), name, err)
	}
	return r, nil
}

func (s *sqlStore) listOverrides(ctx context.Context, t overrideTable) ([]overrideRow, error) {
	rows, err := s.r.QueryContext(ctx, `SELECT name, enabled, updated_at, updated_by FROM `+t.name()+` ORDER BY name`)
	if err != nil {
		return nil, fmt.Errorf("store: cannot list %s overrides: %w", t.noun(), err)
	}
	defer rows.Close()
	out := []overrideRow{}
	for rows.Next() {
		var r overrideRow
		if err := rows.Scan(&r.name, &r.enabled, timeScanner{&r.updatedAt}, &r.updatedBy); err != nil {
			return nil, fmt.Errorf("store: cannot read a %s override: %w", t.noun(), err)
		}
		out = append(out, r)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("store: cannot list %s overrides: %w", t.noun(), err)
	}
	return out, nil
}

func (s *sqlStore) clearOverride(ctx context.Context, t overrideTable, name string) error {
	if err := checkName(t.noun()+" name", name); err != nil {
		return err
	}
	res, err := s.w.ExecContext(ctx, `DELETE FROM `+t.name()+` WHERE name = $1`, name)
	if err != nil {
		return fmt.Errorf("store: cannot clear the override of %s %q: %w", t.noun(), name, err)
	}
	return mustAffect(res, "override of "+t.noun()+" %q", name)
}

// mustAffect turns "no row changed" into ErrNotFound.
func mustAffect(res sql.Result, format string, args ...any) error {
	n, err := res.RowsAffected()
	if err != nil {
		return fmt.Errorf("store: cannot count changed rows: %w", err)
	}
	if n == 0 {
		return notFound(format, args...)
	}
	return nil
}

func (s *sqlStore) SetToolOverride(ctx context.Context, p SetToolOverrideParams) (ToolOverride, error) {
	r, err := s.setOverride(ctx, toolTable, p.Name, p.Enabled, p.UpdatedBy)
	if err != nil {
		return ToolOverride{}, err
	}
	return r.toTool(), nil
}

func (s *sqlStore) ToolOverrides(ctx context.Context) ([]ToolOverride, error) {
	rows, err := s.listOverrides(ctx, toolTable)
	if err != nil {
		return nil, err
	}
	out := make([]ToolOverride, len(rows))
	for i, r := range rows {
		out[i] = r.toTool()
	}
	return out, nil
}

func (s *sqlStore) ClearToolOverride(ctx context.Context, name string) error {
	return s.clearOverride(ctx, toolTable, name)
}

func (s *sqlStore) SetToolGroupOverride(ctx context.Context, p SetToolGroupOverrideParams) (ToolGroupOverride, error) {
	r, err := s.setOverride(ctx, groupTable, p.Group, p.Enabled, p.UpdatedBy)
	if err != nil {
		return ToolGroupOverride{}, err
	}
	return r.toGroup(), nil
}

func (s *sqlStore) ToolGroupOverrides(ctx context.Context) ([]ToolGroupOverride, error) {
	rows, err := s.listOverrides(ctx, groupTable)
	if err != nil {
		return nil, err
	}
	out := make([]ToolGroupOverride, len(rows))
	for i, r := range rows {
		out[i] = r.toGroup()
	}
	return out, nil
}

func (s *sqlStore) ClearToolGroupOverride(ctx context.Context, group string) error {
	return s.clearOverride(ctx, groupTable, group)
}

func (r overrideRow) toTool() ToolOverride {
	return ToolOverride{Name: r.name, Enabled: r.enabled, UpdatedAt: r.updatedAt, UpdatedBy: r.updatedBy}
}

func (r overrideRow) toGroup() ToolGroupOverride {
	return ToolGroupOverride{Group: r.name, Enabled: r.enabled, UpdatedAt: r.updatedAt, UpdatedBy: r.updatedBy}
}

// settingRow marks the one settings row among the overrides of
// ToolPolicy; it sorts after both tables.
const settingRow = 2

func (s *sqlStore) ToolPolicy(ctx context.Context, settingKey string) (ToolPolicy, error) {
	if err := checkName("setting key", settingKey); err != nil {
		return ToolPolicy{}, err
	}
	// The setting rides along in the overrides' columns: its key as the
	// name, its value as updated_by (both columns text, of the same
	// collation as the overrides' own). Every gate decision outside a
	// run's offer reads this, so it is kept cheap: no ORDER BY (SQLite
	// sorted the union in a temporary sorter; the lists are sorted below,
	// bytewise as the columns collate), and updated_at as an expression,
	// which modernc hands over as text for timeScanner's fast path
	// instead of trying time layouts on it (PostgreSQL keeps the type).
	rows, err := s.r.QueryContext(ctx, `
		SELECT 0, name, enabled, COALESCE(updated_at, updated_at), updated_by FROM tool_overrides
		UNION ALL
		SELECT 1, name, enabled, updated_at, updated_by FROM tool_group_overrides
		UNION ALL
		SELECT 2, key, true, updated_at, value FROM settings WHERE key = $1`, settingKey)
	if err != nil {
		return ToolPolicy{}, fmt.Errorf("store: cannot read the tool overrides: %w", err)
	}
	defer rows.Close()
	p := ToolPolicy{Tools: []ToolOverride{}, Groups: []ToolGroupOverride{}}
	for rows.Next() {
		var t int64
		var r overrideRow
		if err := rows.Scan(&t, &r.name, &r.enabled, timeScanner{&r.updatedAt}, &r.updatedBy); err != nil {
			return ToolPolicy{}, fmt.Errorf("store: cannot read an override: %w", err)
		}
		switch t {
		case int64(groupTable):
			p.Groups = append(p.Groups, r.toGroup())
		case settingRow:
			p.Setting, p.SettingSet = r.updatedBy, true
		default:
			p.Tools = append(p.Tools, r.toTool())
		}
	}
	if err := rows.Err(); err != nil {
		return ToolPolicy{}, fmt.Errorf("store: cannot read the tool overrides: %w", err)
	}
	slices.SortFunc(p.Tools, func(a, b ToolOverride) int { return strings.Compare(a.Name, b.Name) })
	slices.SortFunc(p.Groups, func(a, b ToolGroupOverride) int { return strings.Compare(a.Group, b.Group) })
	return p, nil
}
