package siteindex

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"time"

	"github.com/t3agent/t3agent/internal/store"
)

// batchRows is how many site rows one read and one store write carry.
const batchRows = 1000

// Progress is reported while a build runs.
type Progress struct {
	Table string
	Rows  int64 // rows indexed so far, over all tables
}

// BuildResult sums up a build.
type BuildResult struct {
	Tables   int
	Docs     int64
	Duration time.Duration
}

// Build indexes the site from scratch. Until it finishes the index counts
// as absent (search_records scans live meanwhile). progress, when not
// nil, is called after every batch.
func (ix *Index) Build(ctx context.Context, progress func(Progress)) (BuildResult, error) {
	start := ix.now()
	tables, err := ix.Tables(ctx)
	if err != nil {
		return BuildResult{}, err
	}
	gen, err := ix.st.BeginSiteIndexBuild(ctx)
	if err != nil {
		return BuildResult{}, err
	}
	res := BuildResult{Tables: len(tables)}
	var marks []store.SiteIndexTable
	for _, name := range tables {
		p, err := ix.plan(ctx, name)
		if err != nil || p == nil {
			return res, err
		}
		mark := store.SiteIndexTable{Name: name}
		for after := int64(0); ; {
			docs, err := ix.readBatch(ctx, p, ix.site.DB.NewArgs(), "", after, batchRows)
			if err != nil {
				return res, err
			}
			if len(docs) == 0 {
				break
			}
			if err := ix.st.PutSiteIndexDocs(ctx, docs); err != nil {
				return res, err
			}
			for _, d := range docs {
				mark.MarkTstamp = max(mark.MarkTstamp, d.Tstamp)
				mark.MarkUID = max(mark.MarkUID, d.UID)
			}
			after = docs[len(docs)-1].UID
			res.Docs += int64(len(docs))
			if progress != nil {
				progress(Progress{Table: name, Rows: res.Docs})
			}
			if len(docs) < batchRows {
				break
			}
		}
		marks = append(marks, mark)
	}
	if err := ix.st.FinishSiteIndexSync(ctx, store.FinishSiteIndexSyncParams{Generation: gen, Build: true, Tables: marks}); err != nil {
		return res, err
	}
	res.Duration = ix.now().Sub(start)
	ix.log.InfoContext(ctx, "site index built", "tables", res.Tables, "documents", res.Docs, "duration", res.Duration)
	return res, nil
}

// SyncResult sums up a sync.
type SyncResult struct {
	Changed, Deleted int64
	Duration         time.Duration
}

// Sync brings the index up to date: rows with a tstamp at or after a
// table's mark, or a uid above it, are read again (edits, hiding and
// moves change tstamp); rows gone from the site (removed for good) are
// found by comparing the uid lists. Starttime and endtime need no sync:
// their indexed values are compared with the clock at query time. A
// table new to the TCA is indexed whole. ErrAbsent when never built.
func (ix *Index) Sync(ctx context.Context) (SyncResult, error) {
	start := ix.now()
	state, err := ix.st.SiteIndexState(ctx)
	if errors.Is(err, store.ErrNotFound) || err == nil && !state.Ready {
		return SyncResult{}, ErrAbsent
	}
	if err != nil {
		return SyncResult{}, err
	}
	tables, err := ix.Tables(ctx)
	if err != nil {
		return SyncResult{}, err
	}
	var res SyncResult
	var marks []store.SiteIndexTable
	for _, name := range tables {
		p, err := ix.plan(ctx, name)
		if err != nil || p == nil {
			return res, err
		}
		mark := store.SiteIndexTable{Name: name}
		if i := slices.IndexFunc(state.Tables, func(t store.SiteIndexTable) bool { return t.Name == name }); i >= 0 {
			mark = state.Tables[i]
		}
		a := ix.site.DB.NewArgs()
		qt, _ := a.Quote(name)
		ts, err := a.Quote(p.tstamp)
		if err != nil {
			return res, err
		}
		uid, _ := a.Quote("uid")
		for after := int64(0); ; {
			b := ix.site.DB.NewArgs()
			bcond := qt + "." + ts + " >= " + b.Add(mark.MarkTstamp) + " OR " + qt + "." + uid + " > " + b.Add(mark.MarkUID)
			docs, err := ix.readBatch(ctx, p, b, bcond, after, batchRows)
			if err != nil {
				return res, err
			}
			if len(docs) == 0 {
				break
			}
			if err := ix.st.PutSiteIndexDocs(ctx, docs); err != nil {
				return res, err
			}
			for _, d := range docs {
				mark.MarkTstamp = max(mark.MarkTstamp, d.Tstamp)
				mark.MarkUID = max(mark.MarkUID, d.UID)
			}
			res.Changed += int64(len(docs))
			after = docs[len(docs)-1].UID
			if len(docs) < batchRows {
				break
			}
		}
		gone, err := ix.removed(ctx, name)
		if err != nil {
			return res, err
		}
		if len(gone) > 0 {
			if err := ix.st.DeleteSiteIndexDocs(ctx, name, gone); err != nil {
				return res, err
			}
			res.Deleted += int64(len(gone))
		}
		marks = append(marks, mark)
	}
	if err := ix.st.FinishSiteIndexSync(ctx, store.FinishSiteIndexSyncParams{Generation: state.Generation, Tables: marks}); err != nil {
		return res, err
	}
	res.Duration = ix.now().Sub(start)
	return res, nil
}

// removed lists the indexed uids of table that the site no longer has.
func (ix *Index) removed(ctx context.Context, table string) ([]int64, error) {
	indexed, err := ix.st.SiteIndexUIDs(ctx, table)
	if err != nil || len(indexed) == 0 {
		return nil, err
	}
	a := ix.site.DB.NewArgs()
	qt, err := a.Quote(table)
	if err != nil {
		return nil, err
	}
	uid, _ := a.Quote("uid")
	rows, err := ix.site.DB.SQL.QueryContext(ctx, "SELECT "+uid+" FROM "+qt+" ORDER BY "+uid)
	if err != nil {
		return nil, fmt.Errorf("read the uids of %s: %w", table, err)
	}
	defer rows.Close()
	var gone []int64
	i := 0
	for rows.Next() {
		var u int64
		if err := rows.Scan(&u); err != nil {
			return nil, err
		}
		for i < len(indexed) && indexed[i] < u {
			gone = append(gone, indexed[i])
			i++
		}
		if i < len(indexed) && indexed[i] == u {
			i++
		}
	}
	if err := rows.Err(); err != nil {
		return nil, err
	}
	return append(gone, indexed[i:]...), nil
}
