package agentconfig

import (
	"context"
	"crypto/sha256"
	"crypto/subtle"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"reflect"
	"slices"
	"strings"
	"unicode"

	"github.com/t3agent/t3agent/internal/store"
)

// Action is what applying a document did to one record.
type Action string

const (
	ActionCreated   Action = "created"
	ActionUpdated   Action = "updated"
	ActionUnchanged Action = "unchanged"
	ActionDeleted   Action = "deleted"
)

// Change is one record's line in an ApplyReport.
type Change struct {
	Kind       string `json:"kind"` // provider, model, configuration, task, budget
	Identifier string `json:"identifier"`
	Action     Action `json:"action"`
	// Fields are the document keys that changed, for ActionUpdated.
	Fields []string `json:"fields,omitempty"`
}

// ApplyReport lists every record of the document, and every pruned one,
// in document order: providers, models, configurations, tasks, budgets,
// each by identifier.
type ApplyReport struct {
	Changes []Change `json:"changes"`
	// DryRun is set when nothing was written.
	DryRun bool `json:"dryRun,omitempty"`
	// Digest identifies the document together with the stored records
	// it was compared with: a preview's digest, passed back as
	// ApplyParams.Expect, makes the apply refuse (ErrStale) when either
	// changed since the preview.
	Digest string `json:"digest"`
}

// Count is the number of changes with action a.
func (r *ApplyReport) Count(a Action) int {
	n := 0
	for _, c := range r.Changes {
		if c.Action == a {
			n++
		}
	}
	return n
}

// Changed reports whether the apply changed (or, dry, would change) anything.
func (r *ApplyReport) Changed() bool { return r.Count(ActionUnchanged) != len(r.Changes) }

// ApplyParams are the parameters of Apply.
type ApplyParams struct {
	Document *Document
	// Prune deletes every record the document does not declare. Without
	// it, records outside the document are left as they are.
	Prune bool
	// DryRun validates and reports without writing.
	DryRun bool
	// By names who applied (required).
	By string
	// Expect, when set, is the Digest of the preview this apply
	// confirms; the apply is refused with ErrStale, writing nothing, when
	// the document or the stored records differ from what was previewed.
	Expect string
}

// Apply makes the store match the document: records are created or
// updated by identifier, and with Prune the rest are deleted. It is
// idempotent: applying the same document again reports every record
// unchanged and writes nothing (literal keys are compared with what is
// sealed, not sealed again). A document with any problem is refused whole
// with a *ValidationError listing them; otherwise every change is written
// in one transaction.
//
// The UI and API edit the same records by applying a document that
// declares the records they change, without Prune.
func (s *Service) Apply(ctx context.Context, p ApplyParams) (*ApplyReport, error) {
	if p.Document == nil {
		return nil, fmt.Errorf("%w: no document to apply", ErrInvalid)
	}
	if strings.TrimSpace(p.By) == "" {
		return nil, fmt.Errorf("%w: an apply needs an actor (By)", ErrInvalid)
	}
	existing, err := s.Snapshot(ctx)
	if err != nil {
		return nil, err
	}
	digest, err := applyDigest(p.Document, existing, p.Prune)
	if err != nil {
		return nil, err
	}
	if p.Expect != "" && subtle.ConstantTimeCompare([]byte(p.Expect), []byte(digest)) != 1 {
		return nil, ErrStale
	}
	want, err := validate(p.Document, existing, p.Prune)
	if err != nil {
		return nil, err
	}
	if err := s.sealSecrets(want, existing, p.Document); err != nil {
		return nil, err
	}
	rep := &ApplyReport{DryRun: p.DryRun, Digest: digest}
	batch := store.ApplyAgentConfigParams{UpdatedBy: p.By}

	// Each kind: diff the desired records against the stored ones, queue
	// what differs, and with prune delete what the document leaves out.
	for _, r := range want.providers {
		old, ok := existing.Provider(r.Identifier)
		c := change(KindProvider, r.Identifier, old.toStore(), r.toStore(), ok)
		if c.Action != ActionUnchanged {
			batch.SaveProviders = append(batch.SaveProviders, r.toStore())
		}
		rep.Changes = append(rep.Changes, c)
	}
	for _, r := range want.models {
		old, ok := existing.Model(r.Identifier)
		c := change(KindModel, r.Identifier, old.toStore(), r.toStore(), ok)
		if c.Action != ActionUnchanged {
			batch.SaveModels = append(batch.SaveModels, r.toStore())
		}
		rep.Changes = append(rep.Changes, c)
	}
	for _, r := range want.configurations {
		old, ok := existing.Configuration(r.Identifier)
		c := change(KindConfiguration, r.Identifier, old.toStore(), r.toStore(), ok)
		if c.Action != ActionUnchanged {
			batch.SaveConfigurations = append(batch.SaveConfigurations, r.toStore())
		}
		rep.Changes = append(rep.Changes, c)
	}
	for _, r := range want.tasks {
		old, ok := existing.Task(r.Identifier)
		c := change(KindTask, r.Identifier, old.toStore(), r.toStore(), ok)
		if c.Action != ActionUnchanged {
			batch.SaveTasks = append(batch.SaveTasks, r.toStore())
		}
		rep.Changes = append(rep.Changes, c)
	}
	for _, r := range want.budgets {
		old, ok := existing.Budget(r.Username)
		c := change(KindBudget, r.Username, old.toStore(), r.toStore(), ok)
		if c.Action != ActionUnchanged {
			batch.SaveUserBudgets = append(batch.SaveUserBudgets, r.toStore())
		}
		rep.Changes = append(rep.Changes, c)
	}
	if p.Prune {
		prune := func(kind string, have []string, keep []string, del *[]string) {
			for _, id := range have {
				if !slices.Contains(keep, id) {
					*del = append(*del, id)
					rep.Changes = append(rep.Changes, Change{Kind: kind, Identifier: id, Action: ActionDeleted})
				}
			}
		}
		prune(KindProvider, ids(existing.Providers, func(v Provider) string { return v.Identifier }),
			ids(want.providers, func(v Provider) string { return v.Identifier }), &batch.DeleteProviders)
		prune(KindModel, ids(existing.Models, func(v Model) string { return v.Identifier }),
			ids(want.models, func(v Model) string { return v.Identifier }), &batch.DeleteModels)
		prune(KindConfiguration, ids(existing.Configurations, func(v Configuration) string { return v.Identifier }),
			ids(want.configurations, func(v Configuration) string { return v.Identifier }), &batch.DeleteConfigurations)
		prune(KindTask, ids(existing.Tasks, func(v Task) string { return v.Identifier }),
			ids(want.tasks, func(v Task) string { return v.Identifier }), &batch.DeleteTasks)
		prune(KindBudget, ids(existing.Budgets, func(v UserBudget) string { return v.Username }),
			ids(want.budgets, func(v UserBudget) string { return v.Username }), &batch.DeleteUserBudgets)
	}
	slices.SortStableFunc(rep.Changes, func(a, b Change) int {
		if d := kindRank(a.Kind) - kindRank(b.Kind); d != 0 {
			return d
		}
		return strings.Compare(a.Identifier, b.Identifier)
	})
	if p.DryRun || !rep.Changed() {
		return rep, nil
	}
	if err := s.st.ApplyAgentConfig(ctx, batch); err != nil {
		return nil, fmt.Errorf("the configuration could not be stored, nothing was applied: %w", err)
	}
	return rep, nil
}

// ErrStale refuses an apply whose preview (ApplyParams.Expect) no longer
// matches: the document or the stored records changed since.
var ErrStale = errors.New("the configuration changed since the preview; preview it again")

// applyDigest is the SHA-256 of the document, the prune flag and the
// stored records (with their update stamps), in JSON.
func applyDigest(doc *Document, existing *Snapshot, prune bool) (string, error) {
	h := sha256.New()
	enc := json.NewEncoder(h)
	if err := enc.Encode(doc); err != nil {
		return "", fmt.Errorf("digest of the document: %w", err)
	}
	if err := enc.Encode(existing); err != nil {
		return "", fmt.Errorf("digest of the stored configuration: %w", err)
	}
	if err := enc.Encode(prune); err != nil {
		return "", err
	}
	return hex.EncodeToString(h.Sum(nil)), nil
}

func kindRank(kind string) int {
	return slices.Index([]string{KindProvider, KindModel, KindConfiguration, KindTask, KindBudget}, kind)
}

func ids[T any](list []T, id func(T) string) []string {
	out := make([]string, len(list))
	for i, v := range list {
		out[i] = id(v)
	}
	return out
}

// sealSecrets turns every literal key of the desired providers into a
// sealed value: the stored one when it opens to the same plaintext (so a
// re-apply is unchanged), else a fresh seal.
func (s *Service) sealSecrets(want *desired, existing *Snapshot, doc *Document) error {
	var problems []FieldError
	for i := range want.providers {
		p := &want.providers[i]
		old, _ := existing.Provider(p.Identifier)
		line := doc.line(KindProvider, slices.IndexFunc(doc.Providers, func(s ProviderSpec) bool { return s.Identifier == p.Identifier }))
		seal := func(ref *SecretRef, oldRef SecretRef, place, field string) {
			if ref.plain == "" {
				return
			}
			if oldRef.sealed != "" && s.keys != nil {
				if v, err := s.keys.Open(oldRef.sealed, place); err == nil && subtle.ConstantTimeCompare(v, []byte(ref.plain)) == 1 {
					*ref = SecretRef{sealed: oldRef.sealed}
					return
				}
			}
			if s.keys == nil {
				problems = append(problems, FieldError{Kind: KindProvider, Identifier: p.Identifier, Line: line, Field: field,
					Problem: "a literal value is sealed with the master key, and none is configured (security.master_key); set one, or give env:NAME"})
				return
			}
			sealed, err := s.keys.Seal([]byte(ref.plain), place)
			if err != nil {
				problems = append(problems, FieldError{Kind: KindProvider, Identifier: p.Identifier, Line: line, Field: field, Problem: "cannot be sealed"})
				return
			}
			*ref = SecretRef{sealed: sealed}
		}
		seal(&p.APIKey, old.APIKey, keyPlace(p.Identifier), "api_key")
		for _, name := range slices.Sorted(maps.Keys(p.Headers)) {
			ref := p.Headers[name]
			seal(&ref, old.Headers[name], headerPlace(p.Identifier, name), "headers."+name)
			p.Headers[name] = ref
		}
	}
	if len(problems) > 0 {
		return &ValidationError{Problems: problems}
	}
	return nil
}

// change compares a desired record with the stored one (both in the
// store's form), field by field, ignoring the stamps the store sets.
func change(kind, id string, old, want any, exists bool) Change {
	if !exists {
		return Change{Kind: kind, Identifier: id, Action: ActionCreated}
	}
	fields := diffFields("", reflect.ValueOf(old), reflect.ValueOf(want))
	if len(fields) == 0 {
		return Change{Kind: kind, Identifier: id, Action: ActionUnchanged}
	}
	return Change{Kind: kind, Identifier: id, Action: ActionUpdated, Fields: fields}
}

// diffFields names the fields of two structs of one type that differ, as
// document keys (nested budget fields as budgets.<key>).
func diffFields(prefix string, a, b reflect.Value) []string {
	var out []string
	t := a.Type()
	for i := range t.NumField() {
		f := t.Field(i)
		switch f.Name {
		case "CreatedAt", "UpdatedAt", "UpdatedBy", "Identifier", "Username":
			continue
		}
		name := snake(f.Name)
		if f.Name == "Budget" {
			name = "budgets"
		}
		av, bv := a.Field(i), b.Field(i)
		if f.Type.Kind() == reflect.Struct {
			out = append(out, diffFields(prefix+name+".", av, bv)...)
			continue
		}
		if !reflect.DeepEqual(av.Interface(), bv.Interface()) {
			out = append(out, prefix+name)
		}
	}
	return out
}

// snake turns a Go field name into a document key: APIKey → api_key,
// MaxOutputTokens → max_output_tokens.
func snake(s string) string {
	r := []rune(s)
	var b strings.Builder
	for i, c := range r {
		if i > 0 && unicode.IsUpper(c) &&
			(unicode.IsLower(r[i-1]) || (i+1 < len(r) && unicode.IsLower(r[i+1]))) {
			b.WriteByte('_')
		}
		b.WriteRune(unicode.ToLower(c))
	}
	return b.String()
}

// DeleteParams name one record to delete.
type DeleteParams struct {
	// Kind is provider, model, configuration, task or budget.
	Kind string
	// Identifier is the record's identifier (a budget's username).
	Identifier string
	// By names who deleted (required).
	By string
}

// Delete removes one record, for the UI and API; apply --prune does the
// same for a whole file. A record still used by another is refused
// (ErrInvalid) naming its users: a model's provider, a configuration's
// model, a task's configuration. Fallback chains do not hold a record:
// resolving skips a fallback that is gone. A missing record is ErrNotFound.
func (s *Service) Delete(ctx context.Context, p DeleteParams) error {
	if strings.TrimSpace(p.By) == "" {
		return fmt.Errorf("%w: a delete needs an actor (By)", ErrInvalid)
	}
	snap, err := s.Snapshot(ctx)
	if err != nil {
		return err
	}
	batch := store.ApplyAgentConfigParams{UpdatedBy: p.By}
	var exists bool
	var users []string
	switch p.Kind {
	case KindProvider:
		_, exists = snap.Provider(p.Identifier)
		for _, m := range snap.Models {
			if m.Provider == p.Identifier {
				users = append(users, "model "+m.Identifier)
			}
		}
		batch.DeleteProviders = []string{p.Identifier}
	case KindModel:
		_, exists = snap.Model(p.Identifier)
		for _, c := range snap.Configurations {
			if c.Model == p.Identifier {
				users = append(users, "configuration "+c.Identifier)
			}
		}
		batch.DeleteModels = []string{p.Identifier}
	case KindConfiguration:
		_, exists = snap.Configuration(p.Identifier)
		for _, t := range snap.Tasks {
			if t.Configuration == p.Identifier {
				users = append(users, "task "+t.Identifier)
			}
		}
		batch.DeleteConfigurations = []string{p.Identifier}
	case KindTask:
		_, exists = snap.Task(p.Identifier)
		batch.DeleteTasks = []string{p.Identifier}
	case KindBudget:
		_, exists = snap.Budget(p.Identifier)
		batch.DeleteUserBudgets = []string{p.Identifier}
	default:
		return fmt.Errorf("%w: %q is not provider, model, configuration, task or budget", ErrInvalid, p.Kind)
	}
	switch {
	case !exists:
		return fmt.Errorf("%w: there is no %s %q", ErrNotFound, p.Kind, p.Identifier)
	case len(users) > 0:
		return fmt.Errorf("%w: %s %q is used by %s", ErrInvalid, p.Kind, p.Identifier, strings.Join(users, ", "))
	}
	return s.st.ApplyAgentConfig(ctx, batch)
}
