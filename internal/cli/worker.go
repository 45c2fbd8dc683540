package cli

import (
	"errors"
	"fmt"
	"os"
	"os/signal"
	"syscall"

	"github.com/spf13/cobra"

	"github.com/t3agent/t3agent/internal/agent"
)

func (a *app) workerCommand() *cobra.Command {
	var concurrency int
	var drain bool
	var metricsListen string
	cmd := &cobra.Command{
		Use:   "worker [--concurrency N]",
		Short: "Run queued agent runs until stopped, and reap runs whose process died",
		Long: "Run queued agent runs (t3agent run --enqueue) in N slots. Several workers, on several machines, " +
			"may share one PostgreSQL store: a run is claimed by exactly one. SIGINT or SIGTERM stops claiming and " +
			"waits for the runs in flight. Every minute the reaper requeues runs whose lease expired, or " +
			"dead-letters them when a write that must not repeat was under way.",
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if concurrency < 1 || concurrency > 256 {
				return errors.New("--concurrency must be between 1 and 256")
			}
			ctx, stop := signal.NotifyContext(cmd.Context(), os.Interrupt, syscall.SIGTERM)
			defer stop()
			return a.withRuntime(ctx, func(r *runtime) error {
				rt, _, providers, err := a.agentRuntime(r)
				if err != nil {
					return err
				}
				defer providers.Close()
				stopMetrics, err := a.serveMetrics(ctx, metricsListen, r)
				if err != nil {
					return err
				}
				defer stopMetrics()
				var done, failed int
				results := make(chan agent.Result)
				w, err := agent.NewWorker(agent.WorkerParams{Runtime: rt, Concurrency: concurrency, Drain: drain, Logger: a.logger,
					OnResult: func(res agent.Result) { results <- res }})
				if err != nil {
					return err
				}
				w.Start(ctx)
				finished := make(chan struct{})
				go func() {
					w.Wait()
					close(finished)
				}()
				for {
					select {
					case res := <-results:
						done++
						if res.Outcome != agent.OutcomeCompleted {
							failed++
						}
						fmt.Fprintln(a.env.Stderr, summary(res))
					case <-finished:
						fmt.Fprintf(a.env.Stdout, "Worker stopped after %d run(s), %d not completed.\n", done, failed)
						return nil
					}
				}
			})
		},
	}
	cmd.Flags().IntVar(&concurrency, "concurrency", 1, "how many runs execute at once")
	cmd.Flags().BoolVar(&drain, "drain", false, "stop once the queue is empty (batch use)")
	cmd.Flags().StringVar(&metricsListen, "metrics-listen", "", "serve this worker's provider, tool and denial metrics on GET /metrics at this address")
	return cmd
}

func (a *app) runsReapCommand() *cobra.Command {
	return &cobra.Command{
		Use:   "reap",
		Short: "Requeue or dead-letter runs whose lease expired (their process died)",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			ctx := cmd.Context()
			return a.withRuntime(ctx, func(r *runtime) error {
				rt, _, providers, err := a.agentRuntime(r)
				if err != nil {
					return err
				}
				defer providers.Close()
				rep, err := rt.Reap(ctx)
				if err != nil {
					return err
				}
				fmt.Fprintf(a.env.Stdout, "Reaped: %d requeued, %d dead-lettered, %d out of retries.\n", rep.Requeued, rep.DeadLettered, rep.Exhausted)
				return nil
			})
		},
	}
}

func (a *app) runsResealCommand() *cobra.Command {
	return &cobra.Command{
		Use:   "reseal",
		Short: "Seal the parked runs (waiting states, queued requests) again with the current master key",
		Long: "After a master key rotation (the new key current, the old one kept as a previous key), reseal moves " +
			"every parked run to the current key, so the old key can be retired.",
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			ctx := cmd.Context()
			return a.withRuntime(ctx, func(r *runtime) error {
				rt, _, providers, err := a.agentRuntime(r)
				if err != nil {
					return err
				}
				defer providers.Close()
				rep, err := rt.Reseal(ctx)
				if err != nil {
					return err
				}
				fmt.Fprintf(a.env.Stdout, "Resealed %d value(s); %d could not be opened.\n", rep.Resealed, rep.Unreadable)
				return nil
			})
		},
	}
}
