package proxy

// testHookClientLeft, if not nil, runs in Serve as soon as the client's
// side has ended, before the session fails what is still in flight: a test
// holds the session's end there to force the interleaving it checks.
var testHookClientLeft func()
