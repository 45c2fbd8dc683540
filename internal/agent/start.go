package agent

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/t3agent/t3agent/internal/agentconfig"
	"github.com/t3agent/t3agent/internal/llm"
	"github.com/t3agent/t3agent/internal/typo3"
)

// Resolver resolves what a run starts from: a configuration, or a task
// with its configuration; *agentconfig.Service implements it.
type Resolver interface {
	Resolve(ctx context.Context, identifier string) (*agentconfig.Resolved, error)
	ResolveTask(ctx context.Context, identifier string) (agentconfig.Task, *agentconfig.Resolved, error)
}

// StartParams describe a run started from the API or the console: from a
// task (its prompt template around Input) or from a configuration (Input
// as the prompt).
type StartParams struct {
	Task          string
	Configuration string
	Input         string
	Tools         []string
	MaxRounds     int
	Actor         *typo3.BackendUser
	Caller        Caller
}

// ErrStartRequest marks a start that names no task or configuration, or
// both, or whose prompt is empty; its text is the sentence to show.
var ErrStartRequest = errors.New("agent: bad start request")

type startError struct{ msg string }

func (e *startError) Error() string        { return e.msg }
func (e *startError) Is(target error) bool { return target == ErrStartRequest }

// BuildRequest resolves p into a Request. An unknown or inactive task or
// configuration matches agentconfig.ErrNotFound or ErrInactive; a
// malformed start matches ErrStartRequest.
func BuildRequest(ctx context.Context, res Resolver, p StartParams) (Request, error) {
	if (p.Task == "") == (p.Configuration == "") {
		return Request{}, &startError{"Name either a task or a configuration to start the run from."}
	}
	if p.MaxRounds < 0 || p.MaxRounds > MaxRounds {
		return Request{}, &startError{fmt.Sprintf("The round cap must be between 0 (the configuration's) and %d.", MaxRounds)}
	}
	var cfg *agentconfig.Resolved
	prompt := p.Input
	if p.Task != "" {
		t, c, err := res.ResolveTask(ctx, p.Task)
		if err != nil {
			return Request{}, err
		}
		cfg, prompt = c, t.Render(p.Input)
	} else {
		c, err := res.Resolve(ctx, p.Configuration)
		if err != nil {
			return Request{}, err
		}
		cfg = c
	}
	if strings.TrimSpace(prompt) == "" {
		return Request{}, &startError{"The prompt is empty: write what the run should do."}
	}
	return Request{
		Config: cfg, Messages: []llm.Message{{Role: llm.RoleUser, Content: prompt}},
		Actor: p.Actor, Caller: p.Caller, Tools: p.Tools, MaxRounds: p.MaxRounds,
	}, nil
}
