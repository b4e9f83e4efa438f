package injection

import (
	"reflect"
	"testing"
)

// TestTriggersAsAppended: the rules each trigger word opens, laid out in
// one array, are those appended word by word, in the rules' order.
func TestTriggersAsAppended(t *testing.T) {
	for _, definitions := range []bool{false, true} {
		d := newDetector(kindSet(^uint32(0)), definitions)
		want := map[string][]int{}
		i := 0
		for _, r := range rules {
			if r.definitionsOnly && !definitions {
				continue
			}
			for _, w := range r.triggers {
				want[w] = append(want[w], i)
			}
			i++
		}
		if !reflect.DeepEqual(d.triggers, want) {
			t.Errorf("definitions %v: the triggers' rules differ from those appended", definitions)
		}
		for w, rs := range d.triggers {
			if cap(rs) != len(rs) {
				t.Errorf("the rules of %q can be appended to in place: %d of %d", w, len(rs), cap(rs))
			}
		}
	}
}
