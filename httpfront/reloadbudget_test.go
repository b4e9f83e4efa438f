package httpfront

import (
	"fmt"
	"os"
	"slices"
	"testing"

	"github.com/mcpgate/mcpgate/config"
)

// The body budget is sized, when the front is made, to hold one request of
// max_message_bytes while it runs. A reload that raises or lowers
// max_message_bytes changes neither: the setting keeps its value until
// mcpgate restarts (the client's stdio stream and each server's connection
// are sized by it), so the front goes on reading bodies up to the limit
// its budget was sized for. Should max_message_bytes ever apply at a
// reload, this fails, and the budget must be resized with it.
func TestReloadKeepsTheMessageLimitAndItsBudgetTogether(t *testing.T) {
	const start = 64 << 20
	for _, next := range []int{300 << 20, 1 << 20} {
		t.Run(fmt.Sprint(next>>20, "MiB"), func(t *testing.T) {
			f, _ := newServedFront(t, fmt.Sprintf(`, "max_message_bytes": %d`, start), nil)
			budget := f.bodies.max
			self, _ := os.Executable()
			cfg, err := config.Load([]byte(fmt.Sprintf(`{"mcpServers": {"greeter": {"command": %q, "env": {"MCPGATE_EXAMPLE_SERVER": "1"}}}, "namespace": false, "max_message_bytes": %d}`, self, next)), "mcpgate.json", os.LookupEnv)
			if err != nil {
				t.Fatal(err)
			}
			ch, err := f.g.Reload(cfg)
			if err != nil {
				t.Fatal(err)
			}
			if !slices.Contains(ch.NeedRestart, "max_message_bytes") {
				t.Errorf("a reload to max_message_bytes %d MiB: restart_needed is %v, want it to name max_message_bytes", next>>20, ch.NeedRestart)
			}
			if got := f.g.Config().MaxMessage; got != start {
				t.Fatalf("a reload to max_message_bytes %d MiB: the limit in force is %d MiB, and the body budget still holds %d MiB (sized for %d MiB): resize it with the limit", next>>20, got>>20, f.bodies.max>>20, start>>20)
			}
			if f.bodies.max != budget || f.bodies.max < heldCost(start) {
				t.Errorf("the body budget went from %d to %d bytes; want it kept, holding one request of %d MiB", budget, f.bodies.max, start>>20)
			}
		})
	}
}
