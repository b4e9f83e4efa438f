package policy

import (
	"context"
	"testing"
)

type ownPolicy struct{}

func (ownPolicy) Name() string                            { return "own" }
func (ownPolicy) Stages() []Stage                         { return []Stage{Result} }
func (ownPolicy) Decide(context.Context, *Input) Decision { return Decision{} }

func TestChainQuick(t *testing.T) {
	for _, c := range []struct {
		name  string
		chain Chain
		quick bool
	}{
		{"none", Chain{}, true},
		{"text scans, poisoning, args, rate_limit", Chain{&textScan{}, &poisoning{}, &argsPolicy{}, &rateLimitPolicy{}}, true},
		{"exec", Chain{&textScan{}, &execPolicy{}}, false},
		{"paths", Chain{&pathsPolicy{}}, false},
		{"the program's own", Chain{ownPolicy{}}, false},
	} {
		if got := c.chain.Quick(); got != c.quick {
			t.Errorf("a chain of %s: Quick() = %v, want %v", c.name, got, c.quick)
		}
	}
}
