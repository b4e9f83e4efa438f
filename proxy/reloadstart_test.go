package proxy

import (
	"context"
	"strings"
	"testing"
	"time"
)

// A server a reload removes while it is still starting is unavailable
// because of the reload, and says so: the requests that waited for its
// start were failed with "mcpgate is stopping", which it was not.
func TestReloadDuringStartSaysSo(t *testing.T) {
	cfg := loadTestConfig(t, `{"mcpServers": {"slow": {"command": "sleep", "args": ["60"], "init_timeout": "60s"}, "other": {"command": "sleep", "args": ["60"], "init_timeout": "60s"}}}`)
	g, err := New(cfg, Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer g.Close()
	g.Start()
	u := g.live().byName["slow"]
	waited := make(chan error, 1)
	go func() {
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		_, err := u.connectionCtx(ctx) // a request waiting for the start
		waited <- err
	}()
	if _, err := g.Reload(loadTestConfig(t, `{"mcpServers": {"other": {"command": "sleep", "args": ["60"], "init_timeout": "60s"}}}`)); err != nil {
		t.Fatal(err)
	}
	select {
	case err := <-waited:
		if err == nil || !strings.Contains(err.Error(), "a config reload removed or replaced it") || strings.Contains(err.Error(), "mcpgate is stopping") {
			t.Errorf("a request waiting for the start of a server a reload removed: %v; want it to name the reload", err)
		}
	case <-time.After(20 * time.Second):
		t.Fatal("the request waiting for the start was not answered once the reload removed the server")
	}
}
