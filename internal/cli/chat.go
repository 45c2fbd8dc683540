package cli

import (
	"errors"
	"fmt"
	"os"
	"os/signal"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/spf13/cobra"

	"github.com/t3agent/t3agent/internal/agent"
	"github.com/t3agent/t3agent/internal/agentconfig"
	"github.com/t3agent/t3agent/internal/chat"
	"github.com/t3agent/t3agent/internal/store"
)

// chatService builds the chat over an opened runtime and its agent
// runtime, with the chat.* configuration keys. serve calls it too.
func (a *app) chatService(r *runtime, rt *agent.Runtime, cfgs *agentconfig.Service) (*chat.Service, error) {
	settings, err := r.cfg.Chat.Settings()
	if err != nil {
		return nil, err
	}
	return chat.New(chat.Params{
		Store: r.store, Runtime: rt, Tasks: cfgs, Users: r.site, Settings: settings,
		SiteName: r.cfg.Site.Name, Now: time.Now, Logger: a.logger, TracerProvider: r.tracerProvider(),
	})
}

// withChat opens the runtime, the agent runtime and the chat for one
// command.
func (a *app) withChat(cmd *cobra.Command, fn func(r *runtime, svc *chat.Service) error) error {
	return a.withRuntime(cmd.Context(), func(r *runtime) error {
		rt, cfgs, providers, err := a.agentRuntime(r)
		if err != nil {
			return err
		}
		defer providers.Close()
		svc, err := a.chatService(r, rt, cfgs)
		if err != nil {
			return err
		}
		return fn(r, svc)
	})
}

func (a *app) chatCommand() *cobra.Command {
	cmd := &cobra.Command{
		Use:   "chat",
		Short: "Run the chat's turns and clean up its conversations",
		Long: "The chat's conversations are created and written through the web UI and the API; these commands " +
			"are their consumers: `chat worker` runs queued turns until stopped (serve runs one unless --no-worker), " +
			"`chat process ID` runs one conversation's turn, `chat cleanup` fails stale turns and archives and " +
			"deletes old conversations at once (serve and chat worker also run it every chat.maintenance_interval).",
	}
	cmd.AddCommand(a.chatProcessCommand(), a.chatWorkerCommand(), a.chatCleanupCommand())
	return cmd
}

// processedView is what `chat process --json` prints.
type processedView struct {
	ID           int64                    `json:"id"`
	Processed    bool                     `json:"processed"`
	Status       store.ConversationStatus `json:"status"`
	RunID        string                   `json:"runId,omitempty"`
	ErrorCode    string                   `json:"errorCode,omitempty"`
	ErrorMessage string                   `json:"errorMessage,omitempty"`
}

func (a *app) chatProcessCommand() *cobra.Command {
	return &cobra.Command{
		Use:   "process ID",
		Short: "Claim one queued conversation and run its turn",
		Long: "Claim conversation ID if a turn (or a recorded decision) waits in it, and run that turn now. " +
			"A conversation with nothing queued is no error: the command says so and exits 0. A turn that ends " +
			"failed exits non-zero with its code.",
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			id, err := strconv.ParseInt(args[0], 10, 64)
			if err != nil || id <= 0 {
				return fmt.Errorf("%q is not a conversation id (a positive number)", args[0])
			}
			ctx, stop := signal.NotifyContext(cmd.Context(), os.Interrupt, syscall.SIGTERM)
			defer stop()
			cmd.SetContext(ctx)
			return a.withChat(cmd, func(r *runtime, svc *chat.Service) error {
				if _, err := r.store.Conversation(ctx, id); errors.Is(err, store.ErrNotFound) {
					return fmt.Errorf("there is no conversation %d", id)
				} else if err != nil {
					return err
				}
				processed, err := svc.Process(ctx, id)
				if err != nil {
					return fmt.Errorf("conversation %d: %w", id, err)
				}
				c, err := r.store.Conversation(ctx, id)
				if err != nil {
					return err
				}
				v := processedView{ID: id, Processed: processed, Status: c.Status, RunID: c.RunID, ErrorCode: c.ErrorCode, ErrorMessage: c.ErrorMessage}
				if a.jsonOut {
					if err := writeJSON(a.env.Stdout, v); err != nil {
						return err
					}
				} else if !processed {
					fmt.Fprintf(a.env.Stdout, "Conversation %d: nothing to do (it is %s).\n", id, c.Status)
				} else {
					fmt.Fprintf(a.env.Stdout, "Conversation %d is %s%s.\n", id, c.Status, runSuffix(c))
				}
				if processed && c.Status == store.ConversationFailed {
					return fmt.Errorf("conversation %d failed (%s): %s", id, orDash(c.ErrorCode), strings.TrimSuffix(orDash(c.ErrorMessage), "."))
				}
				return nil
			})
		},
	}
}

func runSuffix(c store.Conversation) string {
	if c.RunID == "" {
		return ""
	}
	return " (run " + c.RunID + ")"
}

func (a *app) chatWorkerCommand() *cobra.Command {
	var poll time.Duration
	var concurrency int
	var drain bool
	var metricsListen string
	cmd := &cobra.Command{
		Use:   "worker [--poll-interval 200ms] [--concurrency N]",
		Short: "Run queued chat turns until stopped",
		Long: "Claim queued conversations (a message sent, Retry, or an approval or answer recorded) and run their " +
			"turns in N slots. Several workers, on several machines, may share one PostgreSQL store: a " +
			"conversation is claimed by exactly one. SIGINT or SIGTERM stops claiming and waits for the turns in " +
			"flight. Every chat.maintenance_interval (1m) it also reconciles recorded decisions and runs cleanup " +
			"with the chat.* periods, so turns left locked by a crashed worker are freed (not with --drain). " +
			"Defaults come from chat.poll_interval and chat.worker_concurrency.",
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			ctx, stop := signal.NotifyContext(cmd.Context(), os.Interrupt, syscall.SIGTERM)
			defer stop()
			cmd.SetContext(ctx)
			return a.withChat(cmd, func(r *runtime, svc *chat.Service) error {
				if !cmd.Flags().Changed("poll-interval") {
					poll = r.cfg.Chat.PollInterval
				}
				if !cmd.Flags().Changed("concurrency") {
					concurrency = r.cfg.Chat.WorkerConcurrency
				}
				if poll < 10*time.Millisecond || poll > time.Minute {
					return errors.New("--poll-interval must be between 10ms and 1m")
				}
				if concurrency < 1 || concurrency > 256 {
					return errors.New("--concurrency must be between 1 and 256")
				}
				w, err := chat.NewWorker(chat.WorkerParams{Service: svc, Concurrency: concurrency, Poll: poll, Logger: a.logger, Drain: drain,
					MaintainEvery: r.cfg.Chat.MaintenanceInterval, After: a.env.After})
				if err != nil {
					return err
				}
				stopMetrics, err := a.serveMetrics(ctx, metricsListen, r)
				if err != nil {
					return err
				}
				defer stopMetrics()
				a.logger.Info("chat worker started", "concurrency", concurrency, "poll", poll.String(), "drain", drain)
				w.Start(ctx)
				w.Wait()
				fmt.Fprintln(a.env.Stdout, "Chat worker stopped.")
				return nil
			})
		},
	}
	cmd.Flags().DurationVar(&poll, "poll-interval", 0, "how long an idle slot waits before looking again (default chat.poll_interval, 200ms)")
	cmd.Flags().IntVar(&concurrency, "concurrency", 0, "how many turns run at once (default chat.worker_concurrency)")
	cmd.Flags().BoolVar(&drain, "drain", false, "stop once no conversation is queued (batch use)")
	cmd.Flags().StringVar(&metricsListen, "metrics-listen", "", "serve this worker's provider, tool and denial metrics on GET /metrics at this address")
	return cmd
}

func (a *app) chatCleanupCommand() *cobra.Command {
	var stale, archive, del time.Duration
	cmd := &cobra.Command{
		Use:   "cleanup [--stale-after 5m] [--archive-after 30d] [--delete-after 90d]",
		Short: "Fail stale turns, archive idle conversations and delete old archived ones",
		Long: "serve and chat worker run it every chat.maintenance_interval with the chat.* periods; run it by " +
			"hand for other periods, or where no serve or chat worker runs. In order: a turn queued or running for longer than " +
			"--stale-after fails with code timedOut and its recorded decision is cleared, so a Retry cannot replay " +
			"an old approval; an idle, unpinned conversation untouched for --archive-after is archived; an archived " +
			"one untouched for --delete-after is deleted with its messages. 0 skips archiving or deleting. " +
			"Durations take s, m, h and whole days (30d); the defaults come from the chat.* keys.",
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			return a.withChat(cmd, func(r *runtime, svc *chat.Service) error {
				p := chat.CleanupParams{StaleAfter: r.cfg.Chat.StaleAfter, ArchiveAfter: r.cfg.Chat.ArchiveAfter, DeleteAfter: r.cfg.Chat.DeleteAfter}
				if cmd.Flags().Changed("stale-after") {
					p.StaleAfter = stale
				}
				if cmd.Flags().Changed("archive-after") {
					p.ArchiveAfter = archive
				}
				if cmd.Flags().Changed("delete-after") {
					p.DeleteAfter = del
				}
				if p.StaleAfter <= 0 {
					return errors.New("--stale-after must be a positive duration such as 5m")
				}
				if p.ArchiveAfter < 0 || p.DeleteAfter < 0 {
					return errors.New("--archive-after and --delete-after must not be negative (0 skips the step)")
				}
				// 0 means "skip" to the operator; CleanupParams reads 0 as
				// "the settings' value", and anything below 0 as "skip".
				if p.ArchiveAfter == 0 {
					p.ArchiveAfter = -1
				}
				if p.DeleteAfter == 0 {
					p.DeleteAfter = -1
				}
				rep, err := svc.Cleanup(cmd.Context(), p)
				if err != nil {
					return err
				}
				if a.jsonOut {
					return writeJSON(a.env.Stdout, rep)
				}
				fmt.Fprintf(a.env.Stdout, "Cleanup: %d stale turn(s) failed, %d conversation(s) archived, %d deleted.\n", rep.Failed, rep.Archived, rep.Deleted)
				return nil
			})
		},
	}
	f := cmd.Flags()
	f.Var(daysDuration{&stale}, "stale-after", "fail turns queued or running for longer (default chat.stale_after, 5m)")
	f.Var(daysDuration{&archive}, "archive-after", "archive idle conversations untouched for longer; 0 skips (default chat.archive_after, 30d)")
	f.Var(daysDuration{&del}, "delete-after", "delete archived conversations untouched for longer; 0 skips (default chat.delete_after, 90d)")
	return cmd
}

// daysDuration is a duration flag that also takes whole days ("30d"),
// the unit retention periods are thought in.
type daysDuration struct{ d *time.Duration }

func (v daysDuration) String() string {
	if v.d == nil || *v.d == 0 {
		return ""
	}
	return v.d.String()
}

func (v daysDuration) Set(s string) error {
	d, err := parseDays(s)
	if err != nil {
		return err
	}
	*v.d = d
	return nil
}

func (daysDuration) Type() string { return "duration" }

// parseDays parses a Go duration or a whole number of days ("30d").
func parseDays(s string) (time.Duration, error) {
	s = strings.TrimSpace(s)
	if n, ok := strings.CutSuffix(s, "d"); ok {
		days, err := strconv.Atoi(n)
		if err == nil && days >= 0 && days <= 100*365 {
			return time.Duration(days) * 24 * time.Hour, nil
		}
	} else if d, err := time.ParseDuration(s); err == nil {
		return d, nil
	}
	return 0, fmt.Errorf("%q is not a duration such as 5m, 720h or 30d", s)
}
