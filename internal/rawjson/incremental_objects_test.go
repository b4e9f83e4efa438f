package rawjson

import (
	"bytes"
	"fmt"
	"strings"
	"testing"
)

// objectsOfScan feeds data in pieces as FuzzIncremental does and returns
// the nested object and its array of objects as the scan split them
// (nil: not split), and the key of that array.
func objectsOfScan(data, cuts []byte) (nested []byte, list *ObjectList, key string, ok bool) {
	s, _, e, ok := feedInPieces(data, cuts)
	if !ok || e.innerKey == "" {
		return nil, nil, "", ok
	}
	v := s.top[s.nested]
	o := s.objs.split(v.valStart, s.nested, e.inner)
	if o == nil {
		return data[v.valStart:v.valEnd], nil, "", true
	}
	list, split := o.list(data[v.valStart:v.valEnd])
	if !split {
		return data[v.valStart:v.valEnd], nil, "", true
	}
	return data[v.valStart:v.valEnd], list, o.key, true
}

// FuzzIncrementalObjects checks the array of objects a scan splits out of
// a message's nested object against SplitWithObjects's own pass over that
// object: the same elements, the same members, capped alike.
func FuzzIncrementalObjects(f *testing.F) {
	f.Add(toolListAnswer(3), []byte{40, 7})
	f.Add([]byte(`{"result":{"a":1,"tools":[{"name":"x","b":[1,{"c":2}]},{}, {"n\u0061me":"y"}],"more":[{"z":1}]}}`), []byte{9})
	f.Add([]byte(`{"result":{"tools":[{"name":"x"},{"name":"x","name":"y"}]}}`), []byte{3})
	f.Add([]byte(`{"result":{"tools":[{"name":"x"},3]}}`), []byte{5})
	f.Add([]byte(`{"params":{"tools":[]},"result":{"prompts":[{"name":"p"}]}}`), []byte{1})
	f.Add([]byte(`{"result":{"tools":[[{"name":"x"}]]}}`), []byte{2})
	splitOnce(f, "tools", "prompts")
	f.Fuzz(func(t *testing.T, data, cuts []byte) {
		nested, list, key, ok := objectsOfScan(data, cuts)
		if !ok || list == nil {
			return
		}
		_, want, err := SplitWithObjects(bytes.Clone(nested), key)
		if err != nil || want == nil {
			t.Fatalf("%q: the scan split %q, SplitWithObjects: %v, %v", data, key, want, err)
		}
		if got := describe(list); got != describe(want) {
			t.Fatalf("%q: the scan split %q as\n%s\nSplitWithObjects:\n%s", data, key, got, describe(want))
		}
	})
}

// describe spells out a split: each element, its members' keys, values,
// offsets and capacities.
func describe(l *ObjectList) string {
	var b strings.Builder
	for n, e := range l.Elems {
		fmt.Fprintf(&b, "%s cap %d:", e, cap(e))
		for _, m := range l.Members[n] {
			fmt.Fprintf(&b, " %q=%s@%d cap %d", m.Key, m.Value, m.Start, cap(m.Value))
		}
		if cap(l.Members[n]) != len(l.Members[n]) {
			b.WriteString(" (members not capped)")
		}
		b.WriteString("\n")
	}
	return b.String()
}

// A list answer that arrives in pieces is split, items included, by the
// scan that validates it: SplitWithObjects takes that split from the memo,
// once, and gives what its own pass gives.
func TestIncrementalSplitsAListsItems(t *testing.T) {
	splitOnce(t, "tools")
	data := toolListAnswer(502)
	nested, list, key, ok := objectsOfScan(data, []byte{200, 255, 13})
	if !ok || list == nil || key != "tools" || len(list.Elems) != 502 {
		t.Fatalf("the scan split %q: %d items, ok %v", key, lenOf(list), ok)
	}
	_, want, err := SplitWithObjects(bytes.Clone(nested), "tools")
	if err != nil || describe(list) != describe(want) {
		t.Fatalf("split differs from SplitWithObjects's (%v)", err)
	}

	var s Incremental
	s.Reset()
	for n := 64 << 10; n < len(data); n += 64 << 10 {
		s.Feed(data[:n])
	}
	if !s.Finish(data) {
		t.Fatal("Finish: not valid")
	}
	v := s.top[s.nested]
	result := data[v.valStart:v.valEnd]
	if _, _, ok := takeObjects(result, "prompts"); ok {
		t.Error("the split of tools was taken for prompts")
	}
	ms, got, err := SplitWithObjects(result, "tools")
	if err != nil || describe(got) != describe(want) || len(ms) != 1 {
		t.Fatalf("SplitWithObjects after the scan: %v, %d members", err, len(ms))
	}
	if _, _, ok := takeObjects(result, "tools"); ok {
		t.Error("the split was still in the memo once taken")
	}
	// The scan keeps its room for the next list: the split allocates what
	// the memo and the caller keep, not the room grown again (40 before).
	if allocs := testing.AllocsPerRun(1, func() {
		s.Reset()
		s.Feed(data[:len(data)/2])
		s.Finish(data)
		if _, l, _ := SplitWithObjects(result, "tools"); l == nil {
			t.Fatal("no list")
		}
	}); allocs > 20 {
		t.Errorf("a list of 502 tools scanned and split took %.0f allocations", allocs)
	}
}

func lenOf(l *ObjectList) int {
	if l == nil {
		return -1
	}
	return len(l.Elems)
}

// FuzzIncrementalObjectsTaken checks SplitWithObjects on a nested object
// a scan validated (members, items and error, as the memo gives them)
// against its own pass over a copy the memo knows nothing of, for the key
// the scan split and for another.
func FuzzIncrementalObjectsTaken(f *testing.F) {
	f.Add(toolListAnswer(3), []byte{40, 7}, "tools")
	f.Add([]byte(`{"result":{"tools":1,"a":[{"x":1}],"tools":[{"name":"x"}]}}`), []byte{9}, "tools")
	f.Add([]byte(`{"result":{"prompts":[{"name":"p"}],"tools":[{"name":"t"}]}}`), []byte{4}, "tools")
	f.Add([]byte(`{"result":{"tools":[{"name":"x","name":"y"}]}}`), []byte{3}, "tools")
	splitOnce(f, "tools", "prompts")
	f.Fuzz(func(t *testing.T, data, cuts []byte, other string) {
		// Padded past memoMin, in memory of its own: the memo finds only
		// values that big, by identity.
		pad := strings.Repeat(" ", memoMin)
		data = []byte(string(data) + pad)
		var s Incremental
		s.Reset()
		n := 0
		for _, c := range cuts {
			n += max(int(c), 1)
			if n >= len(data) {
				break
			}
			s.Feed(data[:n])
		}
		if !s.Finish(data) || s.nested < 0 {
			return
		}
		v := s.top[s.nested]
		nested := data[v.valStart:v.valEnd]
		if len(nested) < memoMin {
			return
		}
		for _, key := range []string{other, "tools"} {
			if e, ok := recall(nested); ok && e.objects != nil {
				key = e.objects.key // the split the scan made, taken first
			}
			gotMs, got, gotErr := SplitWithObjects(nested, key)
			wantMs, want, wantErr := SplitWithObjects(bytes.Clone(nested), key)
			if fmt.Sprint(gotErr) != fmt.Sprint(wantErr) || describeMembers(gotMs) != describeMembers(wantMs) || (got == nil) != (want == nil) || (got != nil && describe(got) != describe(want)) {
				t.Fatalf("%q under %q: from the scan %v, %s, %v; own pass %v, %s, %v", data[:len(data)-len(pad)], key, gotErr, describeMembers(gotMs), got, wantErr, describeMembers(wantMs), want)
			}
		}
	})
}

func describeMembers(ms MemberList) string {
	var b strings.Builder
	for _, m := range ms {
		fmt.Fprintf(&b, " %q=%d@%d", m.Key, len(m.Value), m.Start)
	}
	return b.String()
}

// A scan splits no more members than maxSplitMembers out of a list, even
// when one item has them all: the memo keeps a split until it is taken,
// and past that size it would hold more than the message it came from.
func TestIncrementalObjectsBoundsMembersOfOneItem(t *testing.T) {
	var b strings.Builder
	b.WriteString(`{"result":{"tools":[{`)
	for i := range maxSplitMembers + 10 {
		if i > 0 {
			b.WriteByte(',')
		}
		fmt.Fprintf(&b, `"k%d":0`, i)
	}
	b.WriteString(`}]}}`)
	data := []byte(b.String())
	_, list, _, ok := objectsOfScan(data, []byte{255, 255})
	if !ok {
		t.Fatal("the scan found the message invalid")
	}
	if list != nil {
		t.Errorf("the scan split an item of %d members (bound %d)", len(list.Members[0]), maxSplitMembers)
	}
}
