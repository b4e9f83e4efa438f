package httpfront

// routableID is the session id clients see. In a cluster it starts with
// the replica's name ("a.3f…"): a session lives in one replica, and its
// next requests must reach that one. A balancer hashing the id could not
// tell which (initialize came without one, to whichever replica), but it
// can read the name. The name is no secret, and the random part is what
// finds the session: an id with another replica's name is unknown there.
func (f *Front) routableID(random string) string {
	if replica := f.g.Config().Cluster.Replica; replica != "" {
		return replica + "." + random
	}
	return random
}
