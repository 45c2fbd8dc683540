// Package siteindex is t3agent's search index of the TYPO3 site, kept in
// t3agent's own store (store.SiteIndex), never in the site database.
//
// # What is indexed
//
// One document per row of every TCA table that is not sensitive
// (readpolicy.IsSensitiveTable), exists live with uid, pid and its
// ctrl.tstamp column, and has search columns (readpolicy.SearchColumns,
// i.e. ctrl.searchFields without credential-like columns). A document
// holds the row's table, uid, pid, language, tstamp and the visibility
// fields (hidden, deleted, starttime, endtime, fe_group, t3ver_wsid) as
// indexed, its label as title, and three term lists: title terms, body
// terms (markup stripped, entities decoded, FlexForm values without
// credential fields, plus page slugs and titles, content headers and
// file metadata) and extra terms (the raw values' terms the body lacks,
// markup included). Rows are indexed whatever their visibility: a row
// whose starttime passes becomes visible without any change to sync.
//
// # Tokens
//
// Text is folded in Go, the same way at index and at query time, and the
// database only splits the folded terms on spaces (FTS5's unicode61 on
// SQLite, to_tsvector('simple', …) on PostgreSQL): lower case, diacritics
// removed (ä → a, é → e), ß and ligatures spelled out (ß → ss, æ → ae),
// format characters such as the soft hyphen dropped; terms are runs of
// letters and digits. Folding in Go rather than with a language
// configuration of the database gives both drivers one vocabulary, and
// it is per rune, so a substring of a text folds to a substring of the
// folded text: that makes the index a sound candidate source for
// search_records' substring search (Snapshot.Substring), where a
// stemming configuration (german, english or porter) would lose the
// surface forms a substring can hit. Stemming happens at query time
// instead (Query): a light German and English suffix stripper (Stem)
// reduces each word, and every vocabulary term containing the stem takes
// part, which also reaches German compounds (Pumpe → "wasserpumpe").
// Ranking is BM25 (FTS5 bm25(), title weighted 4:1 over body) or
// ts_rank_cd on PostgreSQL (title weight A, body B); extra terms never
// rank.
//
// # Freshness
//
// Build indexes everything (t3agent index build); Sync, run by the
// Syncer in serve every interval, reads the rows of each table whose
// tstamp is at or after the table's mark or whose uid is above it, and
// removes the documents of rows gone from the site (uid lists compared).
// Hiding, deleting (TYPO3 sets the flag) and moving change tstamp. The
// index is stale once its last sync is older than MaxAge; a stale or
// absent index is not used by search_records, which then scans.
//
// # Several processes
//
// The index lives in the shared store, so every process sharing a
// PostgreSQL store sees one index; each serve's syncer may sync it, and
// syncs are idempotent upserts with marks that only move forward. The
// vocabulary is held in memory per process and extended or reloaded
// when the store's moved (one query per search tells).
package siteindex
