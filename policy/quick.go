package policy

// Quick reports whether every policy of c decides on the message alone,
// in time in proportion to its size, without waiting for anything: no
// program asked (exec), no file system looked at (paths), no policy of an
// embedding program's own, whose cost is unknown. The gateway may run
// such a chain on a connection's reader goroutine, for a small message.
func (c Chain) Quick() bool {
	for _, p := range c {
		switch p.(type) {
		case *textScan, *poisoning, *argsPolicy, *rateLimitPolicy:
		default:
			return false
		}
	}
	return true
}
