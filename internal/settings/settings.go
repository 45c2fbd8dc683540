// Package settings is the table of t3agent's own settings an operator may
// change at run time (kept in the store's settings), with their allowed
// values and defaults: what /api/v1/settings and the console's Settings
// page read and write. A value is checked here before it is stored, so
// nothing else has to guess at a typo.
package settings

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/t3agent/t3agent/internal/gate"
	"github.com/t3agent/t3agent/internal/store"
)

// Definition is one setting: its key, the values it takes and the value
// that applies while it is unset.
type Definition struct {
	Key     string
	Values  []string
	Default string
}

// Definitions are the settings the product knows, by key.
func Definitions() []Definition {
	return []Definition{
		{Key: gate.EnforcementSetting, Values: []string{string(gate.Enforce), string(gate.Observe)}, Default: string(gate.Enforce)},
	}
}

func definition(key string) (Definition, bool) {
	for _, d := range Definitions() {
		if d.Key == key {
			return d, true
		}
	}
	return Definition{}, false
}

// Value is a setting as it stands.
type Value struct {
	Key     string   `json:"key"`
	Value   string   `json:"value"`
	Default string   `json:"default"`
	Values  []string `json:"values"`
	// Set reports whether the value is stored (else the default applies).
	Set       bool       `json:"set"`
	UpdatedAt *time.Time `json:"updatedAt,omitempty"`
}

// Error is a refused change: the key and one sentence.
type Error struct {
	Key, Msg string
}

func (e *Error) Error() string { return e.Msg }

// Service reads and changes the settings. Safe for concurrent use.
type Service struct {
	st store.Settings
}

// New returns a Service over st.
func New(st store.Settings) *Service { return &Service{st: st} }

// List is every known setting with its value, by key.
func (s *Service) List(ctx context.Context) ([]Value, error) {
	stored, err := s.st.Settings(ctx)
	if err != nil {
		return nil, err
	}
	out := make([]Value, 0, len(Definitions()))
	for _, d := range Definitions() {
		v := Value{Key: d.Key, Value: d.Default, Default: d.Default, Values: d.Values}
		for _, st := range stored {
			if st.Key == d.Key {
				at := st.UpdatedAt
				v.Value, v.Set, v.UpdatedAt = st.Value, true, &at
			}
		}
		out = append(out, v)
	}
	return out, nil
}

// Update checks every change first, then stores them in one transaction;
// "" resets a setting to its default. A refusal is an *Error and changes
// nothing.
func (s *Service) Update(ctx context.Context, changes map[string]string) error {
	var set []store.SetSettingParams
	var reset []string
	keys := make([]string, 0, len(changes))
	for k := range changes {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	for _, k := range keys {
		v := changes[k]
		d, ok := definition(k)
		if !ok {
			return &Error{Key: k, Msg: fmt.Sprintf("%q is not a setting; the settings are %s.", k, keyNames())}
		}
		if v == "" {
			reset = append(reset, k)
			continue
		}
		if !slices.Contains(d.Values, v) {
			return &Error{Key: k, Msg: fmt.Sprintf("The setting %s takes %s, not %q.", k, strings.Join(d.Values, " or "), v)}
		}
		set = append(set, store.SetSettingParams{Key: k, Value: v})
	}
	if len(set) > 0 {
		if _, err := s.st.SetSettings(ctx, set); err != nil {
			return err
		}
	}
	for _, k := range reset {
		if err := s.st.DeleteSetting(ctx, k); err != nil && !errors.Is(err, store.ErrNotFound) {
			return err
		}
	}
	return nil
}

func keyNames() string {
	var names []string
	for _, d := range Definitions() {
		names = append(names, d.Key)
	}
	return strings.Join(names, ", ")
}
