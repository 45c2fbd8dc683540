package sitesearch

import (
	"context"
	"testing"

	"github.com/t3agent/t3agent/internal/demo"
	"github.com/t3agent/t3agent/internal/demo/demotest"
	"github.com/t3agent/t3agent/internal/typo3"
	"github.com/t3agent/t3agent/internal/typo3/tca"
)

// TestRecordChecks decides the demo's fixed content elements of page 6
// (docs/demo-site.md) as records: only the visible live one is public.
func TestRecordChecks(t *testing.T) {
	t.Parallel()
	s := demotest.New(t, typo3.DialectSQLite)
	site, err := typo3.NewSite(typo3.SiteParams{DB: s.Open(t), TCA: tca.Bundled(), Root: s.Root, Now: demo.DefaultNow})
	if err != nil {
		t.Fatal(err)
	}
	v := newView(site)
	want := map[int64]bool{1: true, 2: false, 3: false, 4: false, 5: false}
	var cands []Candidate
	for uid := range want {
		cands = append(cands, Candidate{Page: 6, Record: RecordRef{Table: "tt_content", UID: uid}})
	}
	cands = append(cands, Candidate{Page: 1, Record: RecordRef{Table: "be_users", UID: 1}})
	if err := v.prepare(context.Background(), cands); err != nil {
		t.Fatal(err)
	}
	for uid, public := range want {
		if _, ok := v.check(Candidate{Page: 6, Record: RecordRef{Table: "tt_content", UID: uid}}, ""); ok != public {
			t.Errorf("tt_content %d: public %v, want %v (record %+v, page %+v)", uid, ok, public, v.records[recKey{"tt_content", uid}], v.pages[6])
		}
	}
	if _, ok := v.check(Candidate{Page: 1, Record: RecordRef{Table: "be_users", UID: 1}}, ""); ok {
		t.Error("a be_users record is public")
	}
	if _, ok := v.check(Candidate{Page: 6, Lang: 1, Record: RecordRef{Table: "tt_content", UID: 1}}, ""); ok {
		t.Error("an English content element is public in German")
	}
}
