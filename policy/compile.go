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

// asProblem turns a constructor's error into a config problem. An error
// that starts with the field it is about ("policies[0].kinds: ...") keeps
// that field as the problem's path.
func asProblem(spec config.Policy, err error) config.Problem {
	if pp, ok := err.(config.Problem); ok {
		return pp
	}
	msg := err.Error()
	if path, rest, ok := strings.Cut(msg, ": "); ok && strings.HasPrefix(path, spec.Path) && !strings.Contains(path, " ") {
		return config.Problem{Path: path, Msg: rest}
	}
	return config.Problem{Path: spec.Path, Msg: msg}
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
