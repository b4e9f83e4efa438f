package proxy

// WardenCommand is the hidden first argument with which the gateway runs
// its own program again as a stdio server's warden, when Options.Wardens
// is set (Linux only). A program that sets it must hand such a run over to
// RunWarden before anything else:
//
//	if len(os.Args) > 1 && os.Args[1] == proxy.WardenCommand {
//		os.Exit(proxy.RunWarden(os.Args[2:]))
//	}
const WardenCommand = "__warden"

// wardenStarted is what a warden reports on its status pipe once the
// server runs; anything else it writes there is why the server did not
// start.
const wardenStarted = "started"
