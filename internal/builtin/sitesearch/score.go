package sitesearch

import (
	"context"
	"math"
	"sort"
	"strings"

	"github.com/t3agent/t3agent/internal/typo3"
)

// rank scores candidates whose backend gives no usable score of its own:
// first by how many of the terms a candidate holds, then by a weight
// that counts a term in the title three times and dampens repetitions in
// the text. It sorts cands in place, best first.
func rank(cands []Candidate, terms []string) {
	cover := make([]int, len(cands))
	for i := range cands {
		title, text := strings.ToLower(cands[i].Title), strings.ToLower(cands[i].Text)
		s := 0.0
		for _, t := range terms {
			inTitle, inText := strings.Count(title, t), strings.Count(text, t)
			if inTitle+inText == 0 {
				continue
			}
			cover[i]++
			s += 1 + 3*math.Min(float64(inTitle), 1) + math.Log1p(float64(inText))
		}
		cands[i].Score = s
	}
	idx := make([]int, len(cands))
	for i := range idx {
		idx[i] = i
	}
	sort.SliceStable(idx, func(a, b int) bool {
		if cover[idx[a]] != cover[idx[b]] {
			return cover[idx[a]] > cover[idx[b]]
		}
		return cands[idx[a]].Score > cands[idx[b]].Score
	})
	sorted := make([]Candidate, len(cands))
	for i, j := range idx {
		sorted[i] = cands[j]
	}
	copy(cands, sorted)
}

// tableHasRows reports whether table exists in the live schema and holds
// at least one row.
func tableHasRows(ctx context.Context, site *typo3.Site, table string) (bool, error) {
	cols, err := site.Columns(ctx, table)
	if err != nil || len(cols) == 0 {
		return false, err
	}
	rows, err := site.DB.SQL.QueryContext(ctx, `SELECT 1 FROM `+site.DB.MustQuote(table)+` LIMIT 1`)
	if err != nil {
		return false, err
	}
	defer rows.Close()
	return rows.Next(), rows.Err()
}

// likeAny is a condition that holds when any of columns contains any of
// terms, case-insensitively where the dialect allows, binding the
// patterns into a.
func likeAny(site *typo3.Site, a *typo3.Args, columns []string, terms []string, all bool) string {
	op := " LIKE "
	if site.DB.Dialect == typo3.DialectPostgres {
		op = " ILIKE "
	}
	var perTerm []string
	for _, t := range terms {
		var ors []string
		for _, c := range columns {
			// One placeholder per use: "?" binds by position.
			ors = append(ors, c+op+a.Add("%"+escapeLike(t)+"%")+` ESCAPE '!'`)
		}
		perTerm = append(perTerm, "("+strings.Join(ors, " OR ")+")")
	}
	join := " OR "
	if all {
		join = " AND "
	}
	return "(" + strings.Join(perTerm, join) + ")"
}

func escapeLike(s string) string {
	return strings.NewReplacer("!", "!!", "%", "!%", "_", "!_").Replace(s)
}
