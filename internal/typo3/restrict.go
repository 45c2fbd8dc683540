package typo3

import (
	"errors"
	"fmt"
	"strings"
)

// Restriction selects which of TYPO3's query restrictions apply.
type Restriction uint8

const (
	// RestrictDeleted drops rows whose ctrl.delete column is set.
	RestrictDeleted Restriction = 1 << iota
	// RestrictDisabled drops rows whose enablecolumns.disabled column is set.
	RestrictDisabled
	// RestrictStartTime drops rows whose enablecolumns.starttime lies after now.
	RestrictStartTime
	// RestrictEndTime drops rows whose enablecolumns.endtime is set and not after now.
	RestrictEndTime
	// RestrictLiveWorkspace keeps only live rows of ctrl.versioningWS tables.
	RestrictLiveWorkspace

	// RestrictDefault is TYPO3's DefaultRestrictionContainer.
	RestrictDefault = RestrictDeleted | RestrictDisabled | RestrictStartTime | RestrictEndTime
	// RestrictLive is the default restrictions plus the live workspace: what
	// a visitor of the live site sees (frontend groups aside).
	RestrictLive = RestrictDefault | RestrictLiveWorkspace
)

// ErrUnknownTable is returned for a table that the site's TCA does not
// define; record access is only ever granted through the TCA.
var ErrUnknownTable = errors.New("table is not defined in the TCA")

// Restrict returns a SQL condition for table (qualified by alias, or by the
// table name when alias is empty) that applies restrictions r as TYPO3's
// restriction classes do, binding values into a. The result is "1=1" when
// nothing applies. Column names come from the TCA ctrl section only:
//
//   - deleted:   ctrl.delete = 0
//   - disabled:  enablecolumns.disabled = 0
//   - starttime: enablecolumns.starttime <= now
//   - endtime:   enablecolumns.endtime = 0 OR enablecolumns.endtime > now
//   - live workspace (versioningWS tables only):
//     t3ver_wsid = 0 AND (t3ver_oid = 0 OR t3ver_state = 4)
//
// The workspace condition is TYPO3's WorkspaceRestriction for workspace 0,
// which backend and frontend share. Since TYPO3 v11 every workspace row
// (new placeholder, delete placeholder, move pointer, modified version) has
// t3ver_wsid > 0, so the first half does the work; the second half also
// drops the live-workspace "archive versions" (t3ver_wsid 0, t3ver_oid > 0)
// that pre-v11 versioning left behind in old databases. A t3ver_state 4 row
// in workspace 0 cannot arise from current TYPO3 and is kept, as TYPO3
// keeps it.
//
// "now" is the site clock in Unix seconds; TYPO3 rounds its access time
// down to the minute for page caching, which t3agent has no reason to do.
func (s *Site) Restrict(a *Args, table, alias string, r Restriction) (string, error) {
	t := s.TCA.Table(table)
	if t == nil {
		return "", fmt.Errorf("%s: %w", table, ErrUnknownTable)
	}
	if alias == "" {
		alias = table
	}
	qual, err := a.Quote(alias)
	if err != nil {
		return "", err
	}
	col := func(name string) (string, error) {
		q, err := a.Quote(name)
		if err != nil {
			return "", fmt.Errorf("TCA of %s: %w", table, err)
		}
		return qual + "." + q, nil
	}
	var parts []string
	add := func(bit Restriction, column string, build func(c string) string) error {
		if r&bit == 0 || column == "" {
			return nil
		}
		c, err := col(column)
		if err != nil {
			return err
		}
		parts = append(parts, build(c))
		return nil
	}
	now := s.Now().Unix()
	ec := t.Ctrl.EnableColumns
	if err := add(RestrictDeleted, t.Ctrl.Delete, func(c string) string { return c + " = 0" }); err != nil {
		return "", err
	}
	if err := add(RestrictDisabled, ec.Disabled, func(c string) string { return c + " = 0" }); err != nil {
		return "", err
	}
	if err := add(RestrictStartTime, ec.StartTime, func(c string) string { return c + " <= " + a.Add(now) }); err != nil {
		return "", err
	}
	if err := add(RestrictEndTime, ec.EndTime, func(c string) string {
		return "(" + c + " = 0 OR " + c + " > " + a.Add(now) + ")"
	}); err != nil {
		return "", err
	}
	if r&RestrictLiveWorkspace != 0 && t.Ctrl.VersioningWS {
		wsid, err := col("t3ver_wsid")
		if err != nil {
			return "", err
		}
		oid, _ := col("t3ver_oid")
		state, _ := col("t3ver_state")
		parts = append(parts, wsid+" = 0 AND ("+oid+" = 0 OR "+state+" = 4)")
	}
	if len(parts) == 0 {
		return "1=1", nil
	}
	return "(" + strings.Join(parts, " AND ") + ")", nil
}
