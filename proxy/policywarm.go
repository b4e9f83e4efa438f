package proxy

// warmPolicies builds what the servers' list policies need before the
// first list is asked for (see policy.Chain.Warm): it runs while the
// servers start, which takes longer. Each detector is built once, however
// many servers share it.
func (g *Gateway) warmPolicies() {
	for _, u := range g.upstreams {
		if u.policies != nil {
			u.policies.chain.Warm()
		}
	}
}
