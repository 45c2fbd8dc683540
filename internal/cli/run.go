package cli

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/signal"
	"slices"
	"strings"
	"syscall"
	"text/tabwriter"
	"time"

	"github.com/spf13/cobra"
	"golang.org/x/term"

	"github.com/t3agent/t3agent/internal/agent"
	"github.com/t3agent/t3agent/internal/agentconfig"
	"github.com/t3agent/t3agent/internal/llm"
	"github.com/t3agent/t3agent/internal/store"
	"github.com/t3agent/t3agent/internal/telemetry"
	"github.com/t3agent/t3agent/internal/typo3"
	"github.com/t3agent/t3agent/internal/web"
)

// agentRuntime builds the agent runtime over an opened runtime. The
// caller closes the returned Providers.
func (a *app) agentRuntime(r *runtime) (*agent.Runtime, *agentconfig.Service, *agent.Providers, error) {
	cfgs := a.agentConfigs(r.store, r.keyring)
	tel := telemetry.New(telemetry.Params{Store: r.store, OnCall: r.events.ProviderCall})
	providers := agent.NewProviders(agent.ProvidersParams{Keys: cfgs, Logger: a.logger, TracerProvider: r.tracerProvider()})
	rt, err := agent.New(agent.Params{
		Gate: r.gate, Store: r.store, Providers: providers, Telemetry: tel, Keyring: r.keyring, Logger: a.logger,
		Configs: cfgs, Users: r.site, TracerProvider: r.tracerProvider(), TraceContent: r.tracing.CaptureContent(),
	})
	if err != nil {
		providers.Close()
		return nil, nil, nil, err
	}
	return rt, cfgs, providers, nil
}

func (a *app) runCommand() *cobra.Command {
	var configuration string
	var tools []string
	var maxRounds int
	var enqueue bool
	cmd := &cobra.Command{
		Use:   `run --configuration NAME --as USER "prompt"`,
		Short: "Run one agent turn and print the answer",
		Long: "Run one agent turn through the loop, as a TYPO3 backend user, with an agent configuration " +
			"(see `t3agent apply`), and print the answer. A summary line (rounds, tool calls, tokens, cost, " +
			"run id) goes to stderr; `t3agent runs show ID` has the whole timeline.\n\n" +
			"--configuration (-C) names the agent configuration; the global --config is the configuration " +
			"file. A prompt of - is read from stdin.",
		Args: cobra.MinimumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			if configuration == "" {
				return errors.New("run needs --configuration NAME (-C): the agent configuration to run with")
			}
			if a.as == "" {
				return errors.New("run needs --as USER: the run acts as a TYPO3 backend user")
			}
			prompt := strings.Join(args, " ")
			if prompt == "-" {
				b, err := io.ReadAll(cmd.InOrStdin())
				if err != nil {
					return fmt.Errorf("cannot read the prompt from stdin: %w", err)
				}
				prompt = string(b)
			}
			if strings.TrimSpace(prompt) == "" {
				return errors.New("the prompt is empty")
			}
			ctx, stop := signal.NotifyContext(cmd.Context(), os.Interrupt, syscall.SIGTERM)
			defer stop()
			return a.withRuntime(ctx, func(r *runtime) error {
				actor, err := a.actor(ctx, r.site)
				if err != nil {
					return err
				}
				rt, cfgs, providers, err := a.agentRuntime(r)
				if err != nil {
					return err
				}
				defer providers.Close()
				resolved, err := cfgs.Resolve(ctx, configuration)
				if err != nil {
					return fmt.Errorf("--configuration %s: %w", configuration, err)
				}
				req := agent.Request{
					Config:    resolved,
					Messages:  []llm.Message{{Role: llm.RoleUser, Content: prompt}},
					Actor:     actor,
					Caller:    agent.Caller{Source: "cli", Operation: "run"},
					MaxRounds: maxRounds,
				}
				if cmd.Flags().Changed("tool") {
					req.Tools = tools
				}
				if enqueue {
					id, err := rt.Enqueue(ctx, req)
					if err != nil {
						return err
					}
					fmt.Fprintln(a.env.Stdout, id)
					return nil
				}
				res := rt.Run(ctx, req)
				return a.printResult(res)
			})
		},
	}
	cmd.Flags().StringVarP(&configuration, "configuration", "C", "", "the agent configuration to run with (not the configuration file, which is --config)")
	cmd.Flags().StringSliceVar(&tools, "tool", nil, "offer only these tools (repeatable; default every enabled tool the gate allows)")
	cmd.Flags().BoolVar(&enqueue, "enqueue", false, "queue the run for a worker (t3agent worker) and print its id")
	cmd.Flags().IntVar(&maxRounds, "max-rounds", 0, fmt.Sprintf("round cap for this run (default the configuration's; at most %d)", agent.MaxRounds))
	return cmd
}

// printResult prints the answer (or why there is none) and the summary.
func (a *app) printResult(res agent.Result) error {
	if a.jsonOut {
		if err := writeJSON(a.env.Stdout, web.ResultView(res)); err != nil {
			return err
		}
	} else if res.Content != "" {
		fmt.Fprintln(a.env.Stdout, strings.TrimRight(res.Content, "\n"))
	}
	fmt.Fprintln(a.env.Stderr, summary(res))
	switch res.Outcome {
	case agent.OutcomeCompleted:
		return nil
	case agent.OutcomeAwaitingApproval, agent.OutcomeAwaitingInput:
		names := make([]string, len(res.Pending.Calls))
		for i, c := range res.Pending.Calls {
			names[i] = c.Name
		}
		what := "approval"
		if res.Outcome == agent.OutcomeAwaitingInput {
			what = "input to " + res.Pending.InputTool
			if m := res.Pending.InputMessage; m != "" {
				what += fmt.Sprintf(": the MCP server asks %q", m)
			}
		}
		return fmt.Errorf("run %s waits for %s (%s)", res.RunID, what, strings.Join(names, ", "))
	}
	msg := res.Error
	if msg == "" {
		msg = "the run ended " + string(res.Outcome)
	}
	if res.RunID != "" {
		return fmt.Errorf("run %s: %s", res.RunID, strings.TrimSuffix(msg, "."))
	}
	return errors.New(strings.TrimSuffix(msg, "."))
}

// summary is the one line after the answer.
func summary(res agent.Result) string {
	reason := string(res.Outcome)
	if res.Termination != "" && string(res.Termination) != reason {
		reason += " (" + string(res.Termination) + ")"
	}
	id := res.RunID
	if id == "" {
		id = "not recorded"
	}
	return fmt.Sprintf("%s · %d round(s) · %d tool call(s) · %d in / %d out tokens · %s · run %s",
		reason, res.Rounds, res.ToolCalls, res.Usage.InputTokens, res.Usage.OutputTokens,
		agent.CostString(res.Cost, res.CostUnknown), id)
}

func (a *app) runsCommand() *cobra.Command {
	cmd := &cobra.Command{
		Use:   "runs",
		Short: "List agent runs, show one, and decide on the waiting ones",
	}
	cmd.AddCommand(a.runsListCommand(), a.runsShowCommand(), a.runsInboxCommand(),
		a.runsDecideCommand(true), a.runsDecideCommand(false), a.runsCancelCommand(), a.runsInputCommand(),
		a.runsReapCommand(), a.runsResealCommand())
	return cmd
}

func (a *app) runsListCommand() *cobra.Command {
	var p store.ListRunsParams
	var status string
	cmd := &cobra.Command{
		Use:   "list",
		Short: "List runs, newest first",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			p.Status = store.RunStatus(status)
			if p.Status != "" && !p.Status.Valid() {
				return fmt.Errorf("--status: %q is not queued, running, waiting_for_approval, waiting_for_input, completed, failed or cancelled", status)
			}
			return a.withStore(cmd.Context(), func(st store.Store) error {
				runs, err := st.Runs(cmd.Context(), p)
				if err != nil {
					return err
				}
				if a.jsonOut {
					return writeJSON(a.env.Stdout, views(runs, web.RunView))
				}
				tw := tabwriter.NewWriter(a.env.Stdout, 0, 4, 2, ' ', 0)
				fmt.Fprintln(tw, "RUN\tSTARTED\tSTATUS\tREASON\tUSER\tCONFIGURATION\tROUNDS\tTOOLS\tTOKENS\tCOST")
				for _, r := range runs {
					fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\t%d\t%d\t%d\t%s\n", r.ID, r.CreatedAt.Format(time.DateTime), r.Status,
						orDash(r.TerminationReason), orDash(r.OwnerUsername), orDash(r.Configuration), r.Rounds, r.ToolCalls,
						r.InputTokens+r.OutputTokens, agent.CostString(agentconfig.USD(r.Cost), r.CostUnknown))
				}
				return tw.Flush()
			})
		},
	}
	cmd.Flags().StringVar(&p.OwnerUsername, "user", "", "only runs of this backend user")
	cmd.Flags().StringVar(&status, "status", "", "only runs in this status")
	cmd.Flags().StringVar(&p.Before, "before", "", "only runs older than this run id (the next page)")
	cmd.Flags().IntVar(&p.Limit, "limit", 20, fmt.Sprintf("at most this many runs (1 to %d)", store.MaxRunLimit))
	return cmd
}

func (a *app) runsShowCommand() *cobra.Command {
	return &cobra.Command{
		Use:   "show ID",
		Short: "Show one run and its event timeline",
		Args:  cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			ctx := cmd.Context()
			return a.withStore(ctx, func(st store.Store) error {
				run, err := st.Run(ctx, args[0])
				if errors.Is(err, store.ErrNotFound) {
					return fmt.Errorf("there is no run %s", args[0])
				}
				if err != nil {
					return err
				}
				var events []store.RunEvent
				for from := int64(0); ; {
					page, err := st.RunEvents(ctx, store.ListRunEventsParams{RunID: run.ID, FromSeq: from})
					if err != nil {
						return err
					}
					events = append(events, page...)
					if len(page) < store.DefaultRunEventLimit {
						break
					}
					from = page[len(page)-1].Seq + 1
				}
				if a.jsonOut {
					return writeJSON(a.env.Stdout, map[string]any{"run": web.RunView(run), "events": views(events, web.EventView)})
				}
				a.printRun(run, events)
				return nil
			})
		},
	}
}

func (a *app) printRun(r store.Run, events []store.RunEvent) {
	w := a.env.Stdout
	fmt.Fprintf(w, "Run %s\n", r.ID)
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	fmt.Fprintf(tw, "  status\t%s\n", r.Status)
	if r.Outcome != "" {
		fmt.Fprintf(tw, "  outcome\t%s\n", r.Outcome)
	}
	if r.TerminationReason != "" {
		fmt.Fprintf(tw, "  reason\t%s\n", r.TerminationReason)
	}
	if r.Error != "" {
		fmt.Fprintf(tw, "  error\t%s (%s)\n", r.Error, r.ErrorClass)
	}
	fmt.Fprintf(tw, "  user\t%s (uid %d)\n", orDash(r.OwnerUsername), r.OwnerUID)
	fmt.Fprintf(tw, "  configuration\t%s\n", orDash(r.Configuration))
	fmt.Fprintf(tw, "  caller\t%s / %s\n", orDash(r.CallerSource), orDash(r.CallerOperation))
	fmt.Fprintf(tw, "  rounds\t%d%s\n", r.Rounds, map[bool]string{true: " (truncated)"}[r.Truncated])
	fmt.Fprintf(tw, "  tool calls\t%d\n", r.ToolCalls)
	fmt.Fprintf(tw, "  tokens\t%d in / %d out\n", r.InputTokens, r.OutputTokens)
	fmt.Fprintf(tw, "  cost\t%s\n", agent.CostString(agentconfig.USD(r.Cost), r.CostUnknown))
	fmt.Fprintf(tw, "  privacy\t%s\n", r.Privacy)
	fmt.Fprintf(tw, "  started\t%s\n", r.CreatedAt.Format(time.RFC3339Nano))
	if !r.FinishedAt.IsZero() {
		fmt.Fprintf(tw, "  finished\t%s (%s)\n", r.FinishedAt.Format(time.RFC3339Nano), r.FinishedAt.Sub(r.CreatedAt).Round(time.Millisecond))
	}
	if r.TurnDigest != "" {
		fmt.Fprintf(tw, "  pending turn\t%s\n", r.TurnDigest)
	}
	_ = tw.Flush()
	fmt.Fprintf(w, "\nEvents (%d)\n", len(events))
	tw = tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "  SEQ\tAT\tROUND\tKIND\tTOOK\tWHAT")
	for _, e := range events {
		took := ""
		if e.Duration > 0 {
			took = e.Duration.String()
		}
		fmt.Fprintf(tw, "  %d\t+%s\t%d\t%s\t%s\t%s\n", e.Seq, e.CreatedAt.Sub(r.CreatedAt).Round(time.Millisecond), e.Round, e.Kind, took,
			agent.Describe(e.Kind, e.Payload))
	}
	_ = tw.Flush()
}

// lookupEnv reads env:NAME keys from the environment the command was
// given.
func (a *app) lookupEnv(name string) (string, bool) {
	for _, kv := range slices.Backward(a.env.Environ) {
		if k, v, ok := strings.Cut(kv, "="); ok && k == name {
			return v, true
		}
	}
	return "", false
}

// withStore opens only the store, for commands that read runs.
func (a *app) withStore(ctx context.Context, fn func(st store.Store) error) error {
	cfg, err := a.loadConfig()
	if err != nil {
		return err
	}
	st, err := store.Open(ctx, cfg.Store.DSN, store.OpenParams{Logger: a.logger})
	if err != nil {
		return err
	}
	defer st.Close()
	return fn(st)
}

func orDash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}

// withAgent opens the runtime and the agent runtime for a decision made
// as the --as user.
func (a *app) withAgent(ctx context.Context, what string, fn func(rt *agent.Runtime, actor *typo3.BackendUser) error) error {
	if a.as == "" {
		return fmt.Errorf("%s needs --as USER: decisions are made by a TYPO3 backend user", what)
	}
	return a.withRuntime(ctx, func(r *runtime) error {
		actor, err := a.actor(ctx, r.site)
		if err != nil {
			return err
		}
		rt, _, providers, err := a.agentRuntime(r)
		if err != nil {
			return err
		}
		defer providers.Close()
		return fn(rt, actor)
	})
}

// decisionError turns a refusal into one sentence with its code.
func decisionError(id string, err error) error {
	var re *agent.RefusedError
	if errors.As(err, &re) {
		return fmt.Errorf("run %s: refused (%s): %s", id, re.Code, re.Detail)
	}
	if errors.Is(err, agent.ErrAccessDenied) {
		return fmt.Errorf("run %s: only an admin or the run's owner may act on it", id)
	}
	if errors.Is(err, store.ErrNotFound) {
		return fmt.Errorf("there is no run %s", id)
	}
	return err
}

func (a *app) runsInboxCommand() *cobra.Command {
	return &cobra.Command{
		Use:   "inbox --as USER",
		Short: "List the waiting runs the --as user may decide, with their pending calls and digests",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			ctx := cmd.Context()
			return a.withAgent(ctx, "inbox", func(rt *agent.Runtime, actor *typo3.BackendUser) error {
				items, err := rt.Inbox(ctx, actor, agent.Access{})
				if err != nil {
					return err
				}
				if a.jsonOut {
					return writeJSON(a.env.Stdout, views(items, web.InboxItemView))
				}
				if len(items) == 0 {
					fmt.Fprintln(a.env.Stdout, "Nothing waits for a decision.")
					return nil
				}
				for _, it := range items {
					printPending(a.env.Stdout, it)
				}
				return nil
			})
		},
	}
}

// printPending shows a waiting run's pending turn: its calls with their
// arguments, the tools' previews, what input it waits for, and the digest
// a decision quotes.
func printPending(w io.Writer, it agent.InboxItem) {
	fmt.Fprintf(w, "Run %s · %s · %s · %s\n", it.Run.ID, it.Run.Status, orDash(it.Run.OwnerUsername), orDash(it.Run.Configuration))
	if it.Unreadable {
		fmt.Fprintln(w, "  the pending turn cannot be read; the run can only be cancelled")
		return
	}
	fmt.Fprintf(w, "  digest %s\n", it.Digest)
	for _, c := range it.Calls {
		fmt.Fprintf(w, "  call %s %s %s\n", c.ID, c.Name, c.Arguments)
	}
	for _, p := range it.Previews {
		for _, l := range p.Lines {
			fmt.Fprintf(w, "  preview of call %d (%s): %s\n", p.Index+1, p.Tool, l)
		}
	}
	if it.Message != "" {
		// The server's own words, control characters already stripped.
		fmt.Fprintf(w, "  the MCP server asks: %s\n", it.Message)
	}
	if it.URL != "" {
		fmt.Fprintf(w, "  open %s to answer, then confirm with --data '{}' (or --decline, --cancel)\n", it.URL)
	}
	if it.Input != "" {
		fmt.Fprintf(w, "  input to %s, schema %s\n", it.Input, it.Schema)
	}
}

func (a *app) runsDecideCommand(approve bool) *cobra.Command {
	var digest, reason string
	var yes bool
	verb := "approve"
	use, short := "approve ID --as USER [--digest D | --yes]", "Approve the pending turn of a run; it then runs as the run's owner"
	if !approve {
		verb = "deny"
		use, short = "deny ID --as USER [--digest D | --yes] [--reason TEXT]", "Deny the pending turn of a run; the model is told and goes on"
	}
	cmd := &cobra.Command{
		Use:   use,
		Short: short,
		Long: short + ".\n\nWith --digest the decision is for exactly the turn the digest names (as `t3agent runs inbox` " +
			"shows it). Without it the pending turn is shown with its digest and, on a terminal, you are asked to " +
			"confirm (y/N); --yes decides the turn shown without asking, for scripts.",
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			ctx, stop := signal.NotifyContext(cmd.Context(), os.Interrupt, syscall.SIGTERM)
			defer stop()
			id := args[0]
			return a.withAgent(ctx, verb, func(rt *agent.Runtime, actor *typo3.BackendUser) error {
				if digest == "" {
					shown, err := a.confirmTurn(ctx, cmd, rt, actor, id, verb, yes)
					if err != nil {
						return err
					}
					digest = shown
				}
				res, err := rt.Approve(ctx, agent.ApproveParams{RunID: id, Approver: actor, Approved: approve, Digest: digest, Reason: reason})
				if err != nil {
					return decisionError(id, err)
				}
				return a.printResult(res)
			})
		},
	}
	cmd.Flags().StringVar(&digest, "digest", "", "the digest of the pending turn, as the inbox shows it")
	cmd.Flags().BoolVar(&yes, "yes", false, "without --digest: "+verb+" the pending turn shown, without asking")
	cmd.Flags().StringVar(&reason, "reason", "", "a note kept with the decision")
	return cmd
}

// confirmTurn shows the run's pending turn (on stderr: stdout is the
// result's) and returns its digest once the decision is confirmed: by
// --yes, or by a person answering y on a terminal. Without either it
// refuses, naming the digest to pass.
func (a *app) confirmTurn(ctx context.Context, cmd *cobra.Command, rt *agent.Runtime, actor *typo3.BackendUser, id, verb string, yes bool) (string, error) {
	it, err := rt.Pending(ctx, actor, agent.Access{}, id)
	if err != nil {
		return "", decisionError(id, err)
	}
	switch {
	case it.Run.Status == store.RunWaitingForInput:
		return "", fmt.Errorf("run %s waits for input, not for approval; answer it with `t3agent runs input %s --data JSON`", id, id)
	case it.Run.Status != store.RunWaitingForApproval || it.Digest == "":
		return "", fmt.Errorf("run %s: refused (%s): the run does not wait for a decision", id, agent.RefusedNotWaiting)
	}
	printPending(a.env.Stderr, it)
	if it.Unreadable {
		return "", fmt.Errorf("run %s: its pending turn cannot be read, so it cannot be decided; cancel it with `t3agent runs cancel %s`", id, id)
	}
	if yes {
		return it.Digest, nil
	}
	if !a.interactive() {
		return "", fmt.Errorf("run %s: %s without --digest asks for confirmation on a terminal; pass --digest %s to %s exactly the turn shown, or --yes", id, verb, it.Digest, verb)
	}
	fmt.Fprintf(a.env.Stderr, "%s this turn? [y/N] ", strings.ToUpper(verb[:1])+verb[1:])
	answer, err := bufio.NewReader(cmd.InOrStdin()).ReadString('\n')
	if err != nil && !errors.Is(err, io.EOF) {
		return "", fmt.Errorf("cannot read the answer: %w", err)
	}
	if a := strings.ToLower(strings.TrimSpace(answer)); a != "y" && a != "yes" {
		return "", fmt.Errorf("run %s: nothing was decided (the answer was not y); the run still waits", id)
	}
	return it.Digest, nil
}

// interactive reports whether a person can answer a prompt on stdin.
func (a *app) interactive() bool {
	if a.env.Interactive {
		return true
	}
	f, ok := a.env.Stdin.(*os.File)
	return ok && term.IsTerminal(int(f.Fd()))
}

func (a *app) runsCancelCommand() *cobra.Command {
	return &cobra.Command{
		Use:   "cancel ID --as USER",
		Short: "Cancel a run that has not ended; a running loop stops at its next step",
		Args:  cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			ctx := cmd.Context()
			return a.withAgent(ctx, "cancel", func(rt *agent.Runtime, actor *typo3.BackendUser) error {
				won, err := rt.Cancel(ctx, actor, agent.Access{}, args[0])
				if err != nil {
					return decisionError(args[0], err)
				}
				if !won {
					return fmt.Errorf("run %s has already ended", args[0])
				}
				fmt.Fprintf(a.env.Stdout, "Run %s cancelled.\n", args[0])
				return nil
			})
		},
	}
}

func (a *app) runsInputCommand() *cobra.Command {
	var digest, data string
	var decline, cancel bool
	cmd := &cobra.Command{
		Use:   "input ID --as USER (--data JSON | --decline | --cancel) --digest D",
		Short: "Answer a run waiting for input (a tool's or an MCP server's question); the run then goes on as its owner",
		Args:  cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			action := "accept"
			switch {
			case decline && cancel, (decline || cancel) && data != "":
				return errors.New("input takes one of --data, --decline and --cancel")
			case decline:
				action = "decline"
			case cancel:
				action = "cancel"
			case data == "":
				return errors.New("input needs --data JSON (the answer, an object matching the input schema), --decline or --cancel")
			}
			ctx, stop := signal.NotifyContext(cmd.Context(), os.Interrupt, syscall.SIGTERM)
			defer stop()
			return a.withAgent(ctx, "input", func(rt *agent.Runtime, actor *typo3.BackendUser) error {
				res, err := rt.SubmitInput(ctx, agent.SubmitInputParams{RunID: args[0], Submitter: actor, Data: []byte(data), Digest: digest, Action: action})
				if err != nil {
					return decisionError(args[0], err)
				}
				return a.printResult(res)
			})
		},
	}
	cmd.Flags().StringVar(&data, "data", "", "the answer, a JSON object")
	cmd.Flags().BoolVar(&decline, "decline", false, "decline to answer (the asking tool or MCP server is told so)")
	cmd.Flags().BoolVar(&cancel, "cancel", false, "dismiss the question without a choice (an MCP server is told \"cancel\")")
	cmd.Flags().StringVar(&digest, "digest", "", "the digest of the pending turn, as the inbox shows it (required)")
	return cmd
}
