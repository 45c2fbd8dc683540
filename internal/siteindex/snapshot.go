package siteindex

import (
	"context"
	"errors"
	"strings"

	"github.com/t3agent/t3agent/internal/store"
)

// Snapshot is the index as one search sees it: its marks and vocabulary,
// read once. Make one per call.
type Snapshot struct {
	ix     *Index
	state  store.SiteIndexState
	vocab  []string
	tables map[string]store.SiteIndexTable
}

// Snapshot returns the index for a search, or nil when it is absent or
// older than MaxAge (the caller then scans the site as without an index).
func (ix *Index) Snapshot(ctx context.Context) (*Snapshot, error) {
	state, err := ix.st.SiteIndexState(ctx)
	if errors.Is(err, store.ErrNotFound) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	if !state.Ready || ix.now().Sub(state.SyncedAt) > ix.maxAge {
		return nil, nil
	}
	vocab := ix.vocabulary(ctx, state)
	if vocab == nil {
		return nil, nil
	}
	s := &Snapshot{ix: ix, state: state, vocab: vocab, tables: map[string]store.SiteIndexTable{}}
	for _, t := range state.Tables {
		s.tables[t.Name] = t
	}
	return s, nil
}

// TableMark is what a search needs to know of one indexed table to add
// the rows changed since the last sync.
type TableMark struct {
	// TstampColumn is the table's ctrl.tstamp column: rows with a value at
	// or above Tstamp, or a uid above UID, are not (yet) in the index as
	// they are now.
	TstampColumn string
	Tstamp, UID  int64
}

// Table returns the marks of table; false when the index does not cover
// it (search it live).
func (s *Snapshot) Table(ctx context.Context, table string) (TableMark, bool, error) {
	t, ok := s.tables[table]
	if !ok {
		return TableMark{}, false, nil
	}
	p, err := s.ix.plan(ctx, table)
	if err != nil || p == nil {
		return TableMark{}, false, err
	}
	return TableMark{TstampColumn: p.tstamp, Tstamp: t.MarkTstamp, UID: t.MarkUID}, true, nil
}

// Match is a substring query resolved against the vocabulary.
type Match struct {
	groups [][]string
	none   bool // a piece occurs in no term: nothing indexed matches
}

// maxPieceTerms bounds the vocabulary terms one query piece may stand
// for; a piece inside more terms (one or two letters, say) narrows too little
// to be worth a statement, and the search scans instead.
const maxPieceTerms = 64

// Substring resolves q for a case-insensitive substring search: the rows
// whose raw searchable text contains q are among the documents holding,
// for each piece of q (see Pieces), a term containing that piece. false
// when the index cannot narrow q; then the caller scans.
func (s *Snapshot) Substring(q string) (*Match, bool) {
	pieces, ok := Pieces(q)
	if !ok {
		return nil, false
	}
	m := &Match{}
	for _, piece := range pieces {
		var g []string
		for _, t := range s.vocab {
			if strings.Contains(t, piece) {
				if len(g) == maxPieceTerms {
					return nil, false
				}
				g = append(g, t)
			}
		}
		if len(g) == 0 {
			m.none = true
			return m, true
		}
		m.groups = append(m.groups, g)
	}
	return m, true
}

// Candidates returns up to limit uids of table above after, ascending,
// whose indexed documents match m.
func (s *Snapshot) Candidates(ctx context.Context, table string, m *Match, after int64, limit int) ([]int64, error) {
	if m.none {
		return nil, nil
	}
	return s.ix.st.SiteIndexCandidates(ctx, store.SiteIndexCandidatesParams{Table: table, AfterUID: after,
		Match: m.groups, Limit: limit})
}
