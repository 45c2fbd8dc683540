package console

import (
	"net/http"
	"time"

	"github.com/t3agent/t3agent/internal/agent"
	"github.com/t3agent/t3agent/internal/chat"
	"github.com/t3agent/t3agent/internal/store"
)

// statusCount is how many of today's runs are in one status.
type statusCount struct {
	Status store.RunStatus
	N      int
}

type dashboardView struct {
	// Today counts today's runs (the person's own, every run for an
	// admin) by status, in a fixed order; TodayTotal adds them up, and
	// TodayMore says the count stopped at the store's page limit.
	Today      []statusCount
	TodayTotal int
	TodayMore  bool
	// Waiting is how many runs wait for this person's decision or answer.
	Waiting int
	// Chat is whether the chat can answer; ChatReason its code when not.
	Chat       bool
	ChatReason string
}

// runStatuses are the statuses in the order the pages show them.
var runStatuses = []store.RunStatus{store.RunQueued, store.RunRunning, store.RunWaitingForApproval,
	store.RunWaitingForInput, store.RunCompleted, store.RunFailed, store.RunCancelled}

func (c *Console) dashboard(q *req) error {
	ctx := q.r.Context()
	var v dashboardView
	now := c.p.Now().UTC()
	midnight := time.Date(now.Year(), now.Month(), now.Day(), 0, 0, 0, 0, time.UTC)
	page, err := c.p.Runtime.Runs(ctx, q.user(), agent.Access{}, store.ListRunsParams{Limit: store.MaxRunLimit})
	if err != nil {
		return err
	}
	rows := page.Runs
	counts := map[store.RunStatus]int{}
	older := false
	for _, r := range rows {
		if r.CreatedAt.Before(midnight) {
			older = true
			continue
		}
		counts[r.Status]++
		v.TodayTotal++
	}
	v.TodayMore = page.Next != "" && !older
	for _, st := range runStatuses {
		if counts[st] > 0 {
			v.Today = append(v.Today, statusCount{st, counts[st]})
		}
	}
	items, err := c.p.Runtime.Inbox(ctx, q.user(), agent.Access{})
	if err != nil {
		return err
	}
	v.Waiting = len(items)
	if c.p.Chat != nil {
		a, err := c.p.Chat.Availability(ctx, q.user())
		if err != nil {
			return err
		}
		v.Chat, v.ChatReason = a.Available, string(a.Reason)
	} else {
		v.ChatReason = string(chat.CodeChatNotConfigured)
	}
	c.render(q, http.StatusOK, "dashboard.html", &pageData{Title: q.t("dashboard.title"), Data: v})
	return nil
}
