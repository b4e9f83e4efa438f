// Command mcpgate is a gateway for the Model Context Protocol: one MCP server
// to its clients, fronting many upstream MCP servers.
//
//	mcpgate [-config FILE]            run the gateway on stdin/stdout (SIGHUP reloads the config)
//	mcpgate check [-config FILE]      connect to every upstream and report
//	mcpgate tools [-config FILE]      list the aggregated tools
//	mcpgate call SERVER__TOOL [JSON]  call one tool and print its result
//	mcpgate demo                      see it work, no config needed
//	mcpgate audit verify FILE...      check the audit trail's hash chain
//	mcpgate version
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"os"
	"os/signal"
	"path/filepath"
	"strings"
	"syscall"
	"time"

	"github.com/mcpgate/mcpgate/config"
	"github.com/mcpgate/mcpgate/httpfront"
	"github.com/mcpgate/mcpgate/jsonrpc"
	"github.com/mcpgate/mcpgate/proxy"
)

// version is set at release time with -ldflags "-X main.version=…".
var version = "0.1.0"

func main() {
	os.Exit(run(os.Args[1:], os.Stdin, os.Stdout, os.Stderr))
}

const usage = `mcpgate: one MCP server in front of many.

Usage:
  mcpgate [flags]              run the gateway; the MCP client talks to it on stdin/stdout
  mcpgate check [flags]        validate the config and connect to every upstream (-json)
  mcpgate tools [flags]        list the aggregated tools and their servers (-json)
  mcpgate call [flags] SERVER__TOOL [JSON]
                               call one tool through the gateway and print its result
  mcpgate lock [flags]         pin the servers' tool and prompt definitions (-diff, -update)
  mcpgate demo                 run against two built-in servers and show what happens
  mcpgate audit verify FILE... check that audit files hold an unbroken hash chain
  mcpgate version              print the version

Run "mcpgate COMMAND -h" for a command's flags.
`

func run(args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	if len(args) > 0 {
		switch args[0] {
		case proxy.WardenCommand: // how mcpgate runs itself between it and a server (Linux)
			return proxy.RunWarden(args[1:])
		case "check":
			return runCheck(args[1:], stdout, stderr)
		case "tools":
			return runTools(args[1:], stdout, stderr)
		case "call":
			return runCall(args[1:], stdout, stderr)
		case "lock":
			return runLock(args[1:], stdout, stderr)
		case "demo":
			return runDemo(args[1:], stdout, stderr)
		case "audit":
			return runAudit(args[1:], stdout, stderr)
		case demoServerCommand:
			return runDemoServer(args[1:], stdin, stdout, stderr)
		case "version":
			fmt.Fprintf(stdout, "mcpgate %s\n", version)
			return 0
		case "help", "-h", "-help", "--help":
			fmt.Fprint(stdout, usage)
			fmt.Fprintln(stdout, "\nFlags for running the gateway:")
			fs, _ := gatewayFlags(stdout)
			fs.SetOutput(stdout)
			fs.PrintDefaults()
			return 0
		}
	}
	return runGateway(args, stdin, stdout, stderr)
}

// commonFlags are the flags every command that loads a config takes.
type commonFlags struct {
	config    string
	logLevel  string
	logFormat string
}

func newFlagSet(name, summary string, stderr io.Writer) (*flag.FlagSet, *commonFlags) {
	fs := flag.NewFlagSet(name, flag.ContinueOnError)
	fs.SetOutput(stderr)
	c := &commonFlags{}
	fs.StringVar(&c.config, "config", "", "config `file` (default: mcpgate.json in the current directory)")
	fs.StringVar(&c.logLevel, "log-level", "info", "log `level`: debug, info, warn or error")
	fs.StringVar(&c.logFormat, "log-format", "text", "log `format`: text or json")
	fs.Usage = func() {
		fmt.Fprintf(stderr, "Usage: %s\n\n%s\n\nFlags:\n", name, summary)
		fs.PrintDefaults()
	}
	return fs, c
}

// parse parses flags; a non-negative code means "exit with it now".
func parse(fs *flag.FlagSet, args []string) int {
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return 0
		}
		return 2
	}
	if fs.NArg() > 0 {
		fmt.Fprintf(fs.Output(), "%s: unexpected argument %q\n", fs.Name(), fs.Arg(0))
		fs.Usage()
		return 2
	}
	return -1
}

func (c *commonFlags) logger(stderr io.Writer) (*slog.Logger, error) {
	var level slog.Level
	if err := level.UnmarshalText([]byte(c.logLevel)); err != nil {
		return nil, fmt.Errorf("-log-level: %q is not one of debug, info, warn, error", c.logLevel)
	}
	opts := &slog.HandlerOptions{Level: level}
	switch c.logFormat {
	case "text":
		return slog.New(slog.NewTextHandler(stderr, opts)), nil
	case "json":
		return slog.New(slog.NewJSONHandler(stderr, opts)), nil
	}
	return nil, fmt.Errorf("-log-format: %q is not text or json", c.logFormat)
}

func (c *commonFlags) configPath() string {
	if c.config == "" {
		return "mcpgate.json"
	}
	return c.config
}

// loadConfig finds, reads and validates the config.
func (c *commonFlags) loadConfig() (*config.Config, error) {
	path := c.configPath()
	if c.config == "" {
		if _, err := os.Stat(path); err != nil {
			return nil, errors.New("no config: pass -config FILE, or put mcpgate.json in the current directory")
		}
	}
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("config: %w", err)
	}
	cfg, err := config.Load(data, path, os.LookupEnv)
	if err != nil {
		return nil, err
	}
	if w := writableWarning(path); w != "" {
		cfg.Warnings = append(cfg.Warnings, w)
	}
	// Here, not where the gateway is built: a reload loads the config
	// again, and must find the same defaults.
	if !cfg.CacheOff && cfg.CacheDir == "" {
		// Without a home (a service's minimal environment), no cache: it
		// only speeds starts up.
		if dir, err := os.UserCacheDir(); err == nil {
			cfg.CacheDir = filepath.Join(dir, "mcpgate")
		}
	}
	return cfg, nil
}

// setup loads the config and builds the gateway, reporting problems to
// stderr. oneOff is for a command's own report (check, tools): it keeps the
// gateway's log and the upstreams' stderr out of its way, and starts one
// instance of each server that otherwise runs once per client session.
func setup(c *commonFlags, stderr io.Writer, oneOff bool) (*proxy.Gateway, *config.Config, *slog.Logger, bool) {
	logOut, upstreamOut := stderr, stderr
	if oneOff {
		logOut, upstreamOut = io.Discard, io.Discard
	}
	log, err := c.logger(logOut)
	if err != nil {
		fmt.Fprintln(stderr, "mcpgate:", err)
		return nil, nil, nil, false
	}
	cfg, err := c.loadConfig()
	if err != nil {
		fmt.Fprintln(stderr, indentErrors(err))
		return nil, nil, nil, false
	}
	for _, w := range cfg.Warnings {
		fmt.Fprintf(stderr, "mcpgate: warning: %s: %s\n", c.configPath(), w)
	}
	g, err := proxy.New(cfg, proxy.Options{Logger: log, UpstreamStderr: upstreamOut, Version: version, Probe: oneOff, Wardens: true})
	if err != nil {
		var list config.ErrorList
		if errors.As(err, &list) {
			for i := range list {
				if list[i].File == "" {
					list[i].File = c.configPath() // a policy the config describes, compiled by New
				}
			}
			err = list
		}
		fmt.Fprintln(stderr, cfg.Redact(indentErrors(err)))
		return nil, nil, nil, false
	}
	return g, cfg, g.Logger(), true // hides the config's ${VAR} values
}

func indentErrors(err error) string {
	var list config.ErrorList
	switch {
	case errors.As(err, &list) && len(list) > 1:
		return fmt.Sprintf("mcpgate: %d problems in the config:\n  %s", len(list), strings.ReplaceAll(list.Error(), "\n", "\n  "))
	case errors.As(err, &list):
		return list.Error() // already says file and field
	}
	return "mcpgate: " + err.Error()
}

// gatewayOptions are the flags of running the gateway itself.
type gatewayOptions struct {
	*commonFlags
	metrics string
	listen  string
	watch   time.Duration
}

func gatewayFlags(stderr io.Writer) (*flag.FlagSet, *gatewayOptions) {
	fs, c := newFlagSet("mcpgate [flags]", "Runs the gateway. The MCP client speaks to it on stdin and stdout\n(or over HTTP with -listen); upstream servers come from the config.", stderr)
	o := &gatewayOptions{commonFlags: c}
	fs.StringVar(&o.metrics, "metrics", "", "serve Prometheus metrics at http://`addr`/metrics (e.g. 127.0.0.1:9464)")
	fs.StringVar(&o.listen, "listen", "", "serve MCP over HTTP at `addr` (e.g. 127.0.0.1:8931) instead of stdio")
	fs.DurationVar(&o.watch, "watch", defaultWatch, "reload the config when its file changes, looking this often (`interval`; 0: only on SIGHUP or POST /admin/reload)")
	return fs, o
}

func runGateway(args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	fs, o := gatewayFlags(stderr)
	c, metricsAddr, listen := o.commonFlags, &o.metrics, &o.listen
	if code := parse(fs, args); code >= 0 {
		return code
	}
	paceGC() // gcpace.go
	// A client that closes its end of stdout or stderr must not kill
	// mcpgate with SIGPIPE (what Go does by default for fd 1 and 2): with
	// SIGPIPE notified, such writes fail with EPIPE instead (see os/signal).
	// Notify, not Ignore: an ignored signal stays ignored in the servers.
	signal.Notify(make(chan os.Signal, 1), syscall.SIGPIPE)
	// SIGHUP reloads the config (reload.go). Caught from here, not once the
	// gateway is built: one sent while mcpgate starts would end it (the
	// default), and the file may have changed since it was read.
	hup := make(chan os.Signal, 1)
	signal.Notify(hup, syscall.SIGHUP)
	defer signal.Stop(hup)
	// A client may also leave stderr open and never read it (logqueue.go).
	logs := newLogQueue(stderr, logQueueBytes, logFlushGrace, c.lossReport(stderr))
	defer logs.Close()
	stderr = logs
	g, cfg, log, ok := setup(c, stderr, false)
	if !ok {
		return 1
	}
	reloads := startReloader(c, g, log, o.watch, hup)
	defer reloads.close()
	if *metricsAddr != "" {
		stopMetrics, err := serveMetrics(*metricsAddr, g, log, reloads)
		if err != nil {
			fmt.Fprintln(stderr, "mcpgate: -metrics:", err)
			g.Close()
			return 1
		}
		defer stopMetrics()
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	if *listen != "" {
		cfg.HTTP.Listen = *listen
	}
	if cfg.HTTP.Listen != "" {
		return serveHTTP(ctx, g, cfg, log, stderr)
	}
	g.Start()
	log.Info("mcpgate serving on stdio", "version", version, "servers", len(cfg.Enabled()))
	if f, ok := stdin.(*os.File); ok {
		stdin = pollable(f, "/dev/stdin")
	}
	if f, ok := stdout.(*os.File); ok {
		stdout = pollable(f, "/dev/stdout")
	}
	ctx, clientLeft := context.WithCancel(ctx)
	defer clientLeft()
	stdout = &leavingWriter{w: stdout, left: func(err error) {
		log.Info("the client closed stdout: shutting down", "err", err)
		clientLeft()
	}}
	err := g.Serve(ctx, jsonrpc.NewLineStream(stdin, stdout, nil, cfg.MaxMessage), proxy.ServeOptions{})
	if cerr := g.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		log.Error("mcpgate stopped", "err", err)
		return 1
	}
	return 0
}

// serveMetrics serves /metrics, and POST /admin/reload, on addr until the
// returned function is called.
func serveMetrics(addr string, g *proxy.Gateway, log *slog.Logger, reloads *reloader) (func(), error) {
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return nil, err
	}
	mux := http.NewServeMux()
	mux.Handle("GET /metrics", g.MetricsHandler())
	mux.Handle("POST /admin/reload", reloads.adminHandler())
	addProbes(mux, g)
	srv := metricsServer(mux)
	done := make(chan struct{})
	go func() {
		defer close(done)
		srv.Serve(ln)
	}()
	log.Info("metrics served", "url", "http://"+ln.Addr().String()+"/metrics")
	return func() {
		srv.Close()
		<-done
	}, nil
}

// maxHeaderBytes bounds a request's headers on every port mcpgate serves
// HTTP on (431 past it). Go's default, a megabyte, is held for the header
// deadline before any token is checked: 300 connections held 320 MB. A
// real client's headers, Mcp-Param-* values and a bearer token included,
// are a few KiB.
const maxHeaderBytes = 64 << 10

// metricsServer is the -metrics address's server. Nothing it serves
// streams: every read and write has a deadline, and a keep-alive left idle
// is closed, or any client that can reach the port could hold connections
// (each a descriptor and a goroutine) for as long as mcpgate runs.
func metricsServer(h http.Handler) *http.Server {
	return &http.Server{Handler: h, ReadHeaderTimeout: 10 * time.Second, ReadTimeout: 30 * time.Second, MaxHeaderBytes: maxHeaderBytes,
		WriteTimeout: 2 * time.Minute, IdleTimeout: 2 * time.Minute} // a reload's answer may take a while: WriteTimeout counts from the request's headers
}

// serveHTTP runs the gateway as a shared service over HTTP until ctx ends.
func serveHTTP(ctx context.Context, g *proxy.Gateway, cfg *config.Config, log *slog.Logger, stderr io.Writer) int {
	addr := cfg.HTTP.Listen
	if err := httpfront.CheckListen(cfg.HTTP); err != nil {
		// The address may come from a ${VAR}: shown as the variable.
		fmt.Fprintln(stderr, cfg.Redact("mcpgate: "+err.Error()))
		g.Close()
		return 1
	}
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		fmt.Fprintln(stderr, "mcpgate: -listen:", cfg.Redact(err.Error()))
		g.Close()
		return 1
	}
	g.Start()
	front := httpfront.New(g, ln.Addr().String())
	// ReadTimeout bounds each request's body (front.BoundBodies): net/http
	// lifts it once the body is read, so it does not end the event stream
	// after. IdleTimeout closes idle keep-alives.
	limited := newConnLimit(ln, httpConnLimit(cfg.HTTP.MaxSessions))
	ln = limited
	srv := frontServer(front, limited)
	// Event streams never go idle: end them ourselves, or Shutdown waits forever.
	srv.RegisterOnShutdown(front.Close)
	served := make(chan error, 1)
	go func() { served <- srv.Serve(ln) }()
	log.Info("mcpgate serving over HTTP", "url", "http://"+ln.Addr().String()+g.Config().HTTP.Path, "version", version, "servers", len(cfg.Enabled()))
	code := 0
	select {
	case <-ctx.Done():
		drainHTTP(g, cfg.Cluster, ln, log)
	case err := <-served:
		log.Error("HTTP server stopped", "err", err)
		code = 1
	}
	// The sessions first: their requests in flight get shutdown_grace while
	// the listener still takes the clients' answers and cancellations.
	// Shutdown then has only answers being written and idle connections left.
	front.Close()
	sctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	srv.Shutdown(sctx)
	cancel()
	if err := g.Close(); err != nil {
		log.Error("mcpgate stopped", "err", err)
		code = 1
	}
	return code
}
