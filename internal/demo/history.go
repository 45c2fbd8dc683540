package demo

import (
	"strconv"
)

// sys_history action types (TYPO3 RecordHistoryStore).
const (
	historyAdd    = 1
	historyModify = 2
	historyDelete = 4
)

// history writes sys_history and sys_log rows for the records collected
// while generating, plus logins and PSR-3 log rows, in TYPO3 v13 shapes:
// DataHandler messages with {placeholders} and JSON log_data.
func (g *generator) history() error {
	hist, err := g.inserter("sys_history", []string{"uid", "tstamp", "actiontype", "usertype", "userid", "originaluserid", "recuid", "tablename", "history_data", "workspace", "correlation_id"})
	if err != nil {
		return err
	}
	logs, err := g.inserter("sys_log", []string{"uid", "tstamp", "userid", "action", "recuid", "tablename", "recpid", "error", "details", "type", "channel", "details_nr", "IP", "log_data", "event_pid", "workspace", "request_id", "time_micro", "component", "level", "message", "data"})
	if err != nil {
		return err
	}
	histUID, logUID := 0, 0
	addHist := func(ts int64, action, user, recuid int, table, data string) error {
		histUID++
		var d any
		if data != "" {
			d = data
		}
		return hist.add(histUID, ts, action, "BE", user, nil, recuid, table, d, 0, "")
	}
	ips := []string{"192.0.2.14", "192.0.2.77", "198.51.100.23", "203.0.113.5"}
	// dhLog is a DataHandler (type 1) entry.
	dhLog := func(ts int64, user, action, recuid int, table string, pid int, details string, data map[string]any) error {
		logUID++
		return logs.add(logUID, ts, user, action, recuid, table, pid, 0, details, 1, "content", 0,
			pick(g.r, ips), jsonString(data), pid, 0, g.requestID(), float64(ts)+float64(g.r.IntN(1000000))/1e6, "", "info", nil, nil)
	}
	for _, rec := range g.logged {
		label := "title"
		if rec.table == "tt_content" {
			label = "header"
		}
		pageTitle := g.pageTitles[rec.pid]
		addData := map[string]any{"uid": rec.uid, "pid": rec.pid, label: rec.title, "hidden": 0, "sys_language_uid": 0, "crdate": rec.crdate, "tstamp": rec.crdate}
		if err := addHist(rec.crdate, historyAdd, rec.user, rec.uid, rec.table, jsonString(addData)); err != nil {
			return err
		}
		logData := map[string]any{"title": rec.title, "table": rec.table, "uid": rec.uid, "pageTitle": pageTitle, "pid": rec.pid}
		if err := dhLog(rec.crdate, rec.user, 1, rec.uid, rec.table, rec.pid, "Record '{title}' ({table}:{uid}) was inserted on page '{pageTitle}' ({pid})", logData); err != nil {
			return err
		}
		if rec.tstam > rec.crdate {
			old, nw := rec.title+" (draft)", rec.title
			mod := jsonString(map[string]any{
				"oldRecord": map[string]any{label: old, "l10n_diffsource": nil},
				"newRecord": map[string]any{label: nw, "l10n_diffsource": nil},
			})
			if err := addHist(rec.tstam, historyModify, rec.user, rec.uid, rec.table, mod); err != nil {
				return err
			}
			logData["history"] = strconv.Itoa(histUID)
			if err := dhLog(rec.tstam, rec.user, 2, rec.uid, rec.table, rec.pid, "Record '{title}' ({table}:{uid}) was updated on page '{pageTitle}' ({pid})", logData); err != nil {
				return err
			}
			delete(logData, "history")
		}
		if rec.deleted {
			ts := max(rec.tstam, rec.crdate) + 3600
			if err := addHist(ts, historyDelete, rec.user, rec.uid, rec.table, ""); err != nil {
				return err
			}
			if err := dhLog(ts, rec.user, 3, rec.uid, rec.table, rec.pid, "Record '{title}' ({table}:{uid}) was deleted from page '{pageTitle}' ({pid})", logData); err != nil {
				return err
			}
		}
	}

	// Backend logins of the last weeks, one failed attempt, a cache flush.
	users := []struct {
		uid  int
		name string
	}{{1, "admin"}, {2, "editor"}, {3, "intern"}}
	for day := 30; day >= 1; day-- {
		u := users[day%len(users)]
		ts := g.now - int64(day)*86400 + int64(8*3600+g.r.IntN(9*3600))
		ip := pick(g.r, ips)
		logUID++
		if err := logs.add(logUID, ts, u.uid, 1, 0, "", 0, 0, "User {username} logged in from {ipAddress}", 255, "user", 1,
			ip, jsonString(map[string]any{"username": u.name, "ipAddress": ip}), -1, 0, g.requestID(), float64(ts), "", "info", nil, nil); err != nil {
			return err
		}
		if day == 12 {
			logUID++
			if err := logs.add(logUID, ts-120, 0, 3, 0, "", 0, 3, "Login-attempt from {ipAddress}, username '{username}', password not accepted!", 255, "user", 1,
				"203.0.113.250", jsonString(map[string]any{"username": "admin", "ipAddress": "203.0.113.250"}), -1, 0, g.requestID(), float64(ts-120), "", "warning", nil, nil); err != nil {
				return err
			}
		}
		if day == 3 {
			logUID++
			if err := logs.add(logUID, ts+600, 1, 1, 0, "", 0, 0, "User {username} has cleared the cache (cacheCmd={command})", 3, "default", 0,
				ip, jsonString(map[string]any{"username": "admin", "command": "all"}), -1, 0, g.requestID(), float64(ts+600), "", "info", nil, nil); err != nil {
				return err
			}
		}
	}
	// Rows of the PSR-3 DatabaseWriter (component/level/message/data).
	psr := []struct{ component, level, message, data string }{
		{"TYPO3.CMS.Core.Resource.ResourceStorage", "warning", `File "/user_upload/images/pump-aqua-100.jpg" does not exist in storage "fileadmin"`, `- {"storage":1}`},
		{"TYPO3.CMS.Frontend.ContentObject.ContentObjectRenderer", "error", "Rendering of content element tt_content:7 failed: template \"Html\" not found", `- {"table":"tt_content","uid":7}`},
		{"TYPO3.CMS.Core.Authentication.BackendUserAuthentication", "notice", "Backend user \"former\" is disabled and cannot log in", `- {"uid":4}`},
		{"TYPO3.CMS.Core.DataHandling.DataHandler", "error", "Attempt to modify table \"be_users\" without permission", `- {"table":"be_users","user":2}`},
	}
	for i, e := range psr {
		ts := g.now - int64(5-i)*86400 + 3600*int64(i+9)
		logUID++
		if err := logs.add(logUID, ts, 0, 0, 0, "", 0, 0, nil, 0, "default", 0, "", nil, -1, 0, g.requestID(),
			float64(ts)+0.25, e.component, e.level, e.message, e.data); err != nil {
			return err
		}
	}
	if err := hist.close(); err != nil {
		return err
	}
	if err := logs.close(); err != nil {
		return err
	}
	g.counts["sys_history"] += hist.total
	g.counts["sys_log"] += logs.total
	return nil
}
