package proxy

import (
	"reflect"
	"slices"
	"weak"

	"github.com/mcpgate/mcpgate/policy"
)

// A server that does not say when its list changes is listed again at
// every client's tools/list, and most send the same bytes each time: the
// fetch is then the last fetch's items again (catalog.go). The list
// policies would decide on each of them again, from verdicts remembered
// one by one (thousands of calls through the chain per list, a tenth of
// mcpgate's CPU on a list of 5,020 tools). When nothing that decides can
// have changed, the last outcome is the outcome: the same items (a list
// is replaced, never changed in place), the same policies, names and
// peers, the same lock file (a serverPolicies' own, never changed) and a
// chain that decides from its input alone (policy.Chain.Repeats). The
// operator is told again of the items not as pinned, as a fetch would.

// listOutcome is what the list policies made of one list.
type listOutcome struct {
	first   *item // the list's first item and its length: the same ones are the same list
	n       int
	names   weak.Pointer[nameTable] // the exposed names' table; weak: it knows every server of its day, retired ones too
	peers   map[string][]string     // the peers they were given, the same map (not merely an equal one)
	out     []item
	held    map[string]withheld // read only
	records []policy.Record     // read only
	told    []int               // the items not as pinned, by index
}

func newListOutcome(items []item, names *nameTable, peers map[string][]string, out []item, held map[string]withheld, records []policy.Record, told []int) *listOutcome {
	if len(items) == 0 {
		return nil
	}
	return &listOutcome{first: &items[0], n: len(items), names: weak.Make(names), peers: peers, out: out, held: held, records: slices.Clip(records), told: told}
}

// answers reports whether o is the outcome of items, named by names among
// peers.
func (o *listOutcome) answers(items []item, names *nameTable, peers map[string][]string) bool {
	return o != nil && len(items) == o.n && &items[0] == o.first && weak.Make(names) == o.names &&
		reflect.ValueOf(peers).UnsafePointer() == reflect.ValueOf(o.peers).UnsafePointer()
}
