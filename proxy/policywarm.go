package proxy

import "runtime/debug"

// warmPolicies builds what the servers' list policies need before the
// first list is asked for (see policy.Chain.Warm): it runs while the
// servers start, which takes longer. Each detector is built once, however
// many servers share it. Building them takes several times the memory
// they keep: that is given back to the system at once, rather than stay
// resident while the gateway idles until the runtime returns it bit by bit.
func (g *Gateway) warmPolicies() {
	warmed := false
	for _, u := range g.upstreams {
		if u.policies != nil && u.policies.chain.Warm() {
			warmed = true
		}
	}
	if warmed {
		debug.FreeOSMemory()
	}
}
