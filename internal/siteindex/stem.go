package siteindex

import "unicode/utf8"

// stopWords are frequent German and English words (folded) that a
// question carries but that tell nothing about the page wanted.
var stopWords = map[string]bool{
	"a": true, "an": true, "and": true, "are": true, "as": true, "at": true, "be": true, "by": true,
	"can": true, "do": true, "does": true, "for": true, "from": true, "how": true, "i": true, "in": true,
	"is": true, "it": true, "of": true, "on": true, "or": true, "that": true, "the": true, "this": true,
	"to": true, "was": true, "what": true, "when": true, "where": true, "which": true, "who": true, "why": true,
	"with": true, "you": true, "your": true, "my": true, "we": true, "our": true, "there": true, "about": true,
	"find": true, "show": true, "der": true, "die": true, "das": true, "den": true, "dem": true, "des": true,
	"ein": true, "eine": true, "einen": true, "einem": true, "einer": true, "eines": true, "und": true,
	"oder": true, "ist": true, "sind": true, "war": true, "wie": true, "wer": true, "wo": true, "wann": true,
	"warum": true, "welche": true, "welcher": true, "welches": true, "mit": true, "von": true, "vom": true,
	"zu": true, "zum": true, "zur": true, "im": true, "am": true, "auf": true, "fur": true, "bei": true,
	"nach": true, "aus": true, "ich": true, "kann": true, "man": true, "es": true, "sie": true, "wir": true,
	"gibt": true, "uber": true, "mein": true, "meine": true, "unser": true, "unsere": true, "nicht": true,
	"auch": true,
}

func stopWord(w string) bool { return stopWords[w] }

// stemSuffixes are German and English inflection endings, longest first.
var stemSuffixes = []string{
	"ungen", "ingen", "ungs", "heit", "keit", "ation", "ings", "ern", "ing", "ung", "ies", "ied", "est",
	"em", "en", "er", "es", "ed", "ly", "e", "n", "s",
}

// minStem is the fewest runes a stem keeps.
const minStem = 4

// Stem strips one inflection ending from a folded word, keeping at least
// minStem runes: "pumpen" → "pump", "pumps" → "pump", "wartung" →
// "wart". Query words are matched by containment against the vocabulary,
// so a light stem is enough and reaches compounds ("wasserpumpe").
func Stem(w string) string {
	for _, s := range stemSuffixes {
		if len(w) > len(s) && w[len(w)-len(s):] == s && utf8.RuneCountInString(w[:len(w)-len(s)]) >= minStem {
			return w[:len(w)-len(s)]
		}
	}
	return w
}
