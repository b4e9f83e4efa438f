package main

import (
	"context"
	"encoding/json"
	"errors"
	"log/slog"
	"net/http"
	"os"
	"sync"
	"time"

	"github.com/mcpgate/mcpgate/config"
	"github.com/mcpgate/mcpgate/httpfront"
	"github.com/mcpgate/mcpgate/proxy"
)

// defaultWatch is how often the config file is looked at for a change.
// A stat a second costs nothing, and an operator who saves the file sees
// it applied before looking at the log.
const defaultWatch = time.Second

// reloader reloads the running gateway's config: on SIGHUP, when the file
// changes (its size or modification time: polled, since the standard
// library watches no files), and on POST /admin/reload (adminHandler).
type reloader struct {
	c   *commonFlags
	g   *proxy.Gateway
	log *slog.Logger
	mu  sync.Mutex // one reload at a time: the file read last is the one applied

	stop context.CancelFunc
	done sync.WaitGroup
}

// startReloader reloads on every SIGHUP that hup (signal.Notify'd by the
// caller) delivers, one that came while mcpgate started included, and polls
// the file every watch (0: never). close ends both.
func startReloader(c *commonFlags, g *proxy.Gateway, log *slog.Logger, watch time.Duration, hup <-chan os.Signal) *reloader {
	r := &reloader{c: c, g: g, log: log}
	ctx, stop := context.WithCancel(context.Background())
	r.stop = stop
	r.done.Add(1)
	go func() {
		defer r.done.Done()
		for {
			select {
			case <-hup:
				r.reload("SIGHUP")
			case <-ctx.Done():
				return
			}
		}
	}()
	if watch > 0 {
		r.done.Add(1)
		go func() {
			defer r.done.Done()
			r.watch(ctx, watch)
		}()
	}
	return r
}

func (r *reloader) close() {
	r.stop()
	r.done.Wait()
}

// fileStamp is what a poll compares: a save changes one or the other.
type fileStamp struct {
	size    int64
	modTime time.Time
}

func stampOf(path string) (fileStamp, bool) {
	fi, err := os.Stat(path)
	if err != nil {
		return fileStamp{}, false
	}
	return fileStamp{fi.Size(), fi.ModTime()}, true
}

// watch reloads when the config file's stamp changes. A file that is
// missing for a while (an editor replacing it) is waited for, not
// reloaded; a change seen once is reloaded once, valid or not.
func (r *reloader) watch(ctx context.Context, every time.Duration) {
	path := r.c.configPath()
	last, _ := stampOf(path)
	tick := time.NewTicker(every)
	defer tick.Stop()
	for {
		select {
		case <-tick.C:
		case <-ctx.Done():
			return
		}
		now, ok := stampOf(path)
		if !ok || now == last {
			continue
		}
		last = now
		r.reload("the config file changed")
	}
}

// reload reads the config file and applies it. Whatever the outcome, the
// gateway has logged and audited it.
func (r *reloader) reload(trigger string) (proxy.Changes, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.reloadLocked(trigger)
}

// reloadLocked is reload with r.mu held.
func (r *reloader) reloadLocked(trigger string) (proxy.Changes, error) {
	r.log.Info("reloading the config", "config", r.c.configPath(), "trigger", trigger)
	cfg, err := r.c.loadConfig()
	if err != nil {
		r.g.ReloadRejected(r.c.configPath(), err)
		return proxy.Changes{}, err
	}
	for _, w := range cfg.Warnings {
		r.log.Warn("config warning", "config", r.c.configPath(), "warning", w)
	}
	return r.g.Reload(cfg)
}

// adminHandler serves POST /admin/reload: it reloads the config and
// answers with what changed, or 422 with every problem. It is guarded like
// MCP over HTTP: a bearer token of the config's "auth" (as in force since
// mcpgate started: auth changes need a restart). Without any, it is
// refused: an open endpoint would let whoever reaches the metrics port
// stop and start servers.
func (r *reloader) adminHandler() http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		tokens := r.g.Config().HTTP.Tokens
		if len(tokens) == 0 {
			http.Error(w, `POST /admin/reload needs a bearer token, and the config in force has none: add "auth": {"tokens": ["${MCPGATE_TOKEN}"]} to the config and restart mcpgate (meanwhile, SIGHUP or saving the file reloads it)`, http.StatusForbidden)
			return
		}
		if !httpfront.BearerValid(tokens, req.Header.Get("Authorization")) {
			w.Header().Set("WWW-Authenticate", `Bearer realm="mcpgate"`)
			http.Error(w, "a valid bearer token is required", http.StatusUnauthorized)
			return
		}
		// One at a time, and no queue of HTTP requests behind a slow one.
		if !r.mu.TryLock() {
			http.Error(w, "a reload is under way; ask again when it has ended", http.StatusConflict)
			return
		}
		ch, err := r.reloadLocked("POST /admin/reload")
		r.mu.Unlock()
		w.Header().Set("Content-Type", "application/json")
		if err != nil {
			w.WriteHeader(http.StatusUnprocessableEntity)
			json.NewEncoder(w).Encode(map[string]any{"error": "config reload rejected: the running config goes on", "problems": problemList(err)})
			return
		}
		json.NewEncoder(w).Encode(ch)
	})
}

// problemList is every problem in err, one a string (already redacted by
// config.Load or Gateway.Reload).
func problemList(err error) []string {
	var list config.ErrorList
	if !errors.As(err, &list) {
		return []string{err.Error()}
	}
	out := make([]string, len(list))
	for i, p := range list {
		out[i] = p.Error()
	}
	return out
}
