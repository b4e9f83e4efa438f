package proxy

import (
	"fmt"
	"slices"
	"testing"
)

func TestDropDuplicates(t *testing.T) {
	// More names listed twice than one warning spells out.
	var twice, once []string
	for i := range 2 * maxDupNamesLogged {
		twice = append(twice, fmt.Sprint(i), fmt.Sprint(i))
		once = append(once, fmt.Sprint(i))
	}
	for _, tt := range []struct {
		in       []string
		want     []string
		warnings string
	}{
		{nil, nil, ""},
		{[]string{"a", "b"}, []string{"a", "b"}, ""},
		{[]string{"a", "a"}, []string{"a"}, "a"},
		{[]string{"a", "b", "a", "c", "b", "a"}, []string{"a", "b", "c"}, "a, b"},
		{twice, once, "0, 1, 2, 3, 4, 5, 6, 7, 8, 9, …"},
	} {
		var items []item
		for i, n := range tt.in {
			items = append(items, item{name: n, raw: []byte(fmt.Sprint(i))})
		}
		kept, warnings := dropDuplicates(items)
		var got []string
		for i, it := range kept {
			got = append(got, it.name)
			// The first entry of each name is the one kept.
			if first := slices.Index(tt.in, it.name); string(it.raw) != fmt.Sprint(first) {
				t.Errorf("dropDuplicates(%q)[%d] is entry %s, want the first, %d", tt.in, i, it.raw, first)
			}
		}
		if !slices.Equal(got, tt.want) || warnings != tt.warnings {
			t.Errorf("dropDuplicates(%q) = %q, %q; want %q, %q", tt.in, got, warnings, tt.want, tt.warnings)
		}
	}
}
