// Package tca reads a TYPO3 site's Table Configuration Array without PHP.
//
// # Where TCA comes from
//
// TYPO3 assembles TCA from every extension's Configuration/TCA files on
// boot and caches the result as PHP source: var/cache/code/core/
// tca_base_<hash>.php (typo3temp/var/… in legacy installs), holding
// "<?php return " + var_export(['tca' => $tca]) + ";". Load takes the
// best source it finds, in this order:
//
//  1. that cache file under the project root (FindCacheFile picks the
//     newest when old ones linger; LoadCacheFile reads one),
//  2. a JSON export the operator hands us (LoadJSON),
//  3. Bundled, our own description of the core tables, good enough to
//     answer questions about pages, tt_content, users, groups and files
//     on a site we cannot read.
//
// A source that exists but cannot be read is an error, not a reason to
// fall through: stale or partial TCA gives wrong answers quietly.
//
// # Two layers
//
// ParseVarExport and ParsePHPReturn turn var_export text into generic
// values (nil, bool, int64, float64, string, *Array); DecodeJSON produces
// the same shapes from JSON, applying PHP's rules (numeric string keys
// become integers, JSON lists get keys 0…n-1), so both sources of one TCA
// compare equal. *Array keeps key order, which TCA relies on for items,
// types and columns.
//
// FromArray then builds the typed model in model.go (TCA, Table, Ctrl,
// Column, …). It reads values the way PHP would ('1', 1 and true are all
// true; comma lists are trimmed; items may be in the v12+ keyed form or
// the older positional one) and keeps each column config and ctrl section
// in full as Raw, as plain maps and slices, for anything the typed fields
// do not cover.
//
// # Safety
//
// The parser never evaluates PHP: it accepts only what var_export writes
// (plus comments and the closing tag), refuses objects, bounds nesting,
// and runs in one pass over the input. Errors are *SyntaxError values
// with line and column.
package tca
