package policy

import (
	"fmt"
	"log/slog"
	"strings"

	"github.com/mcpgate/mcpgate/config"
)

// builtins make each built-in policy from its config entry.
var builtins = map[string]func(config.Policy, Env) (Policy, error){
	"secrets":    newSecrets,
	"pii":        newPII,
	"injection":  newInjection,
	"poisoning":  newPoisoning,
	"paths":      newPaths,
	"args":       newArgs,
	"rate_limit": newRateLimit,
	"exec":       newExec,
}

// Compile makes the chain a server's config entries describe (see
// config.Config.EffectivePolicies), in their order. Every problem is
// reported, as a config.ErrorList naming the field at fault.
func Compile(specs []config.Policy, env Env) (Chain, error) {
	if env.Logger == nil {
		env.Logger = slog.Default()
	}
	var chain Chain
	var problems config.ErrorList
	for _, spec := range specs {
		build, ok := builtins[spec.Name]
		if !ok {
			problems = append(problems, config.Problem{Path: spec.Path + ".policy", Msg: fmt.Sprintf("policy %q is not built into this mcpgate (built in: %s)", spec.Name, strings.Join(builtinNames(), ", "))})
			continue
		}
		p, err := build(spec, env)
		if err != nil {
			problems = append(problems, asProblem(spec, err))
			continue
		}
		chain = append(chain, p)
	}
	if len(problems) > 0 {
		return nil, problems
	}
	return chain, nil
}

// asProblem turns a constructor's error into a config problem; one that
// already names its field keeps it.
func asProblem(spec config.Policy, err error) config.Problem {
	var p config.Problem
	if pp, ok := err.(config.Problem); ok {
		return pp
	}
	p.Path, p.Msg = spec.Path, err.Error()
	return p
}

func builtinNames() []string {
	var out []string
	for _, n := range config.PolicyNames() {
		if _, ok := builtins[n]; ok {
			out = append(out, n)
		}
	}
	return out
}
