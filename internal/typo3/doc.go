// Package typo3 reads a TYPO3 v13 site the way TYPO3's backend would
// decide access, without PHP and without ever writing to it.
//
// A tour:
//
//   - Open connects to the site database (SQLite, MariaDB/MySQL or
//     PostgreSQL) read-only. QuoteIdent refuses anything that is not a
//     plain identifier; values always travel as bound parameters through
//     Args, which numbers PostgreSQL's $n and keeps "?" in text order.
//   - NewSite ties the database to the site's resolved TCA (package tca),
//     the project root and a clock. Site.Columns reads the live schema.
//   - Site.Restrict turns TCA ctrl settings into TYPO3's query
//     restrictions: deleted, hidden, starttime, endtime and the live
//     workspace of versioned tables. Table and column names come from the
//     TCA only.
//   - Site.BackendUserByName / BackendUserByUID load a backend user for
//     acting: groups resolved recursively like GroupResolver (sub groups
//     first, cycles cut, hidden and deleted groups dropped), lists merged
//     like fetchGroupData, web mounts reduced to showable pages. Disabled,
//     deleted or timed-out users yield ErrUserCannotAct.
//     Site.Authenticate checks a login against be_users.password (package
//     password) with one error for every kind of failure.
//   - Site.Rootline walks a page up to the tree root (root first).
//     BackendUser.PermsClause is getPagePermsClause as SQL;
//     MatchesPermsClause the same test on a loaded row.
//   - NewPageAccess gives one request a memoising checker: CanShow
//     (readPageAccess: PAGE_SHOW bits and web mount), IsInWebMount and
//     CalcPerms.
//
// FACTS.md §b and §e (TYPO3 v13.4 core) define the rules; comments name
// the TYPO3 method each function follows.
package typo3
