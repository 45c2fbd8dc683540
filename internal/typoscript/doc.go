// Package typoscript parses and evaluates TYPO3 v12+ TypoScript and TSconfig
// without PHP, giving the answers TYPO3 v13.4 gives. Resolution of a page's
// templates lives in the subpackage template; this package is the engine.
//
// A tour, in the order TYPO3 itself works:
//
//   - Tokenize cuts source into logical Lines like TYPO3's LosslessTokenizer:
//     comments (#, //, /* … */ when a line starts with "/*"), conditions
//     [expr] / [ELSE] / [END] / [GLOBAL], "}" lines, @import and the
//     deprecated <INCLUDE_TYPOSCRIPT:>, and object paths with their operator
//     (= value verbatim, ( … ) multi-line, < copy, =< reference, > unset,
//     := modifier, { block). Broken lines become LineInvalid with a Problem
//     text; the offending text itself is never kept in a problem.
//   - A Builder turns sources (record fields, files, strings) into an
//     include tree of Include nodes, splitting each source at conditions and
//     imports exactly like TreeFromLineStreamBuilder (SegmentInclude,
//     ConditionInclude, ConditionElseInclude, ConditionStopInclude,
//     AtImportInclude …). @import takes EXT: paths, paths relative to the
//     importing file, directories, a missing suffix and one "*" per file
//     name; TSconfig also takes .tsconfig. Files are read through os.Root on
//     the extension (or project) directory, so nothing leads outside it.
//     Import cycles, which TYPO3 would recurse into forever, are cut and
//     reported. Include.TreeString prints the tree as TYPO3's "Included
//     TypoScript" module does. A FileCache shared by Builders keeps files
//     read and tokenized between builds, keyed by path and checked against
//     size and modification time, so a resolution stats the files it uses
//     instead of opening, reading and tokenizing them again.
//   - Scan lists check_typoscript's findings per unsplit node as TYPO3's
//     syntax scanner does (line.invalid, brace.excess, brace.missing,
//     import.empty) plus what building met (import.cycle, limit, …). A
//     Finding names include and line, never the line's text.
//   - BuildAST walks an include tree depth first, deciding each condition
//     with an Evaluator and skipping false branches, resetting the tree at a
//     template with "clear", applying each node's lines to the syntax tree
//     (Node) with TYPO3's operator semantics, substituting constants
//     ({$a.b}, {$a ?? $b}; unknown ones stay as written and substituted
//     values are not scanned again) and evaluating modifiers (getEnv is not:
//     the process environment of the TYPO3 server is not t3agent's; the
//     value is kept and a finding says so). Every condition met is recorded
//     with its verdict and whether it could be decided.
//   - ExprEnv is an Evaluator for the Symfony ExpressionLanguage subset of
//     TYPO3 conditions: literals, arrays, hashes, member and index access,
//     function and method calls, PHP 8 comparison (== loose, === and "in"
//     strict), and/or/not, arithmetic, matches, contains, starts/ends with.
//     Values a live request would supply are Unknown: they make a condition
//     undecided, which counts as false, except where and/or decide anyway.
//   - Node trees flatten to TYPO3's dotted form (Flatten, FlatMap), give the
//     classic "key." array (Array), and Render / RenderFlat produce the
//     capped, optionally redacted text of get_typoscript and get_tsconfig.
//
// Limits bounds every dimension hostile input could blow up: source and
// total size, logical lines, value size (also after substitution or
// modifiers), path and nesting depth, import nesting and count, tree nodes
// (copy bombs), condition length and nesting, output lines. What a limit
// cuts is reported as a finding; nothing panics or runs unbounded.
package typoscript
