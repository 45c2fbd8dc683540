package sitesearch

import (
	"strings"
	"unicode"
	"unicode/utf8"
)

// Question limits, in runes and words.
const (
	minQuestion = 2
	maxQuestion = 200
	maxTerms    = 8
	minTermLen  = 2
	maxTermLen  = 60 // index_words.baseword is varchar(60)
)

// stopwords are the English and German words a natural question is made
// of and no page is about. They are dropped so that "What does the Aqua
// 200 cost?" searches for aqua, 200 and cost.
var stopwords = func() map[string]bool {
	m := map[string]bool{}
	for _, w := range strings.Fields(`
		a an and are as at be been but by can could did do does for from had has have how i if in
		into is it its me my of on or our please show should tell that the their them there these
		they this those to us was we were what when where which who whom why will with would you your
		about any some find give get know need want let much many more most than then so not no yes
		der die das den dem des ein eine einer eines einem einen und oder aber als am an auf aus bei
		bin bis bist da damit dann darf dass dein deine du durch er es euch für gibt hat habe haben
		hast ich ihr im in ist ja kann kannst können mit mir mich nach nicht noch nur ob sich sie sind
		so um uns unser unsere von vom vor war was wann warum was welche welcher welches wer wie wo
		wir wird zu zum zur über bitte mehr viel viele sagen zeige zeig finde gib`) {
		m[w] = true
	}
	return m
}()

// Terms splits a question into search words: lower-cased, cut at every
// rune that is neither a letter nor a digit, English and German
// stopwords dropped, words shorter than two runes dropped, each word
// once, at most eight, in the order they appear. When only stopwords
// remain, the longest words of the question are kept instead, so that a
// question is never searched as nothing.
func Terms(question string) []string {
	var all, kept []string
	seen := map[string]bool{}
	for _, w := range strings.FieldsFunc(question, func(r rune) bool { return !unicode.IsLetter(r) && !unicode.IsDigit(r) }) {
		w = strings.ToLower(w)
		if n := utf8.RuneCountInString(w); n < minTermLen || n > maxTermLen || seen[w] {
			continue
		}
		seen[w] = true
		all = append(all, w)
		if !stopwords[w] && len(kept) < maxTerms {
			kept = append(kept, w)
		}
	}
	if len(kept) > 0 {
		return kept
	}
	if len(all) > maxTerms {
		all = all[:maxTerms]
	}
	return all
}
