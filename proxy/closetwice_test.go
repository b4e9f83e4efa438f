package proxy_test

import (
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"testing"

	"github.com/mcpgate/mcpgate/config"
	"github.com/mcpgate/mcpgate/proxy"
)

// A vendoring program may close its gateway from a deferred call and from
// its shutdown path: the second Close returns what the first did, and does
// not panic (it did, closing the audit trail's background writer twice).
func TestCloseTwice(t *testing.T) {
	self, _ := os.Executable()
	audit := filepath.Join(t.TempDir(), "audit.jsonl")
	cfg, err := config.Load([]byte(fmt.Sprintf(`{"mcpServers": {"greeter": {"command": %q, "env": {"MCPGATE_EXAMPLE_SERVER": "1"}}}, "audit": {"path": %q}, "policies": []}`, self, audit)), "mcpgate.json", os.LookupEnv)
	if err != nil {
		t.Fatal(err)
	}
	g, err := proxy.New(cfg, proxy.Options{Logger: slog.New(slog.DiscardHandler)})
	if err != nil {
		t.Fatal(err)
	}
	g.Start()
	<-g.Ready()
	first := g.Close()
	if second := g.Close(); second != first {
		t.Fatalf("the second Close returned %v, the first %v", second, first)
	}
}
