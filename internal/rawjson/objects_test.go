package rawjson

import (
	"bytes"
	"fmt"
	"strings"
	"testing"
)

// FuzzObjectsValid checks the one-pass split of an array of objects
// against ElementsValid followed by SplitValid on each element: same
// elements, same members and offsets, same verdict, on any valid array.
func FuzzObjectsValid(f *testing.F) {
	for _, s := range []string{
		`[{"name":"a","x":{"y":[1,"]"]}},{"name":"b\"c"}]`, ` [ { } , {"k\u0041" : [ ] } ] `, `[]`,
		`[{"a":1,"a":2}]`, `[{"a":1},2]`, `[{"a":"\\"},{}]`, `{"a":1}`, `[[{"a":1}]]`,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		if !Valid(data) {
			return // known valid input only, as with ElementsValid and SplitValid
		}
		elems, members, err := ObjectsValid(data)
		oldElems, oldErr := ElementsValid(data)
		var oldMembers []MemberList
		if oldErr == nil {
			for _, e := range oldElems {
				ms, err := SplitValid(e)
				if err != nil {
					oldErr = err
					break
				}
				oldMembers = append(oldMembers, ms)
			}
		}
		if (err == nil) != (oldErr == nil) {
			t.Fatalf("verdicts differ on %q: one pass %v, two %v", data, err, oldErr)
		}
		if err != nil {
			return
		}
		if len(elems) != len(oldElems) || len(members) != len(elems) {
			t.Fatalf("%q: %d elements (%d member lists), want %d", data, len(elems), len(members), len(oldElems))
		}
		for i := range elems {
			if !bytes.Equal(elems[i], oldElems[i]) {
				t.Fatalf("%q element %d: %q, want %q", data, i, elems[i], oldElems[i])
			}
			if len(members[i]) != len(oldMembers[i]) || cap(members[i]) != len(members[i]) {
				t.Fatalf("%q element %d: members %+v (cap %d), want %+v", data, i, members[i], cap(members[i]), oldMembers[i])
			}
			for j, m := range members[i] {
				o := oldMembers[i][j]
				if m.Key != o.Key || !bytes.Equal(m.Value, o.Value) || m.Start != o.Start {
					t.Fatalf("%q element %d member %d: %+v, want %+v", data, i, j, m, o)
				}
			}
		}
	})
}

func TestObjectsValidErrors(t *testing.T) {
	for in, want := range map[string]string{
		`[{"a":1},2]`:         "[1]: not a JSON object",
		`[{},{"a":1,"a":2}]`:  `[1]: duplicate member "a"`,
		`{"a":1}`:             "not a JSON array",
		`[{"a":1}`:            "invalid JSON array",
		`[{"a":1}, {"b":"x}]`: "invalid JSON array",
	} {
		if _, _, err := ObjectsValid([]byte(in)); err == nil || err.Error() != want {
			t.Errorf("ObjectsValid(%s): %v, want %q", in, err, want)
		}
	}
}

// A list of thousands of tools is split with a few allocations in all, not
// one or more per tool: the members share one array, and the keys of a
// tool's definition are not copied.
func TestObjectsValidAllocations(t *testing.T) {
	var b strings.Builder
	b.WriteString("[")
	const n = 1000
	for i := range n {
		if i > 0 {
			b.WriteByte(',')
		}
		fmt.Fprintf(&b, `{"name":"t%d","title":"T","description":"d","inputSchema":{"type":"object"},"outputSchema":{},"annotations":{},"_meta":{}}`, i)
	}
	b.WriteString("]")
	arr := []byte(b.String())
	allocs := testing.AllocsPerRun(5, func() {
		if _, _, err := ObjectsValid(arr); err != nil {
			t.Fatal(err)
		}
	})
	// Growing three slices takes a few dozen allocations; one per tool
	// would be a thousand.
	if allocs > 100 {
		t.Errorf("splitting %d tools took %.0f allocations, want at most 100", n, allocs)
	}
}

func BenchmarkObjectsValid(b *testing.B) {
	var sb strings.Builder
	sb.WriteString("[")
	for i := range 5000 {
		if i > 0 {
			sb.WriteByte(',')
		}
		fmt.Fprintf(&sb, `{"name":"s_query_%03d","description":"Runs query %d against the records it holds and returns the rows as JSON.","inputSchema":{"type":"object","properties":{"table":{"type":"string"}},"required":["table"]}}`, i, i)
	}
	sb.WriteString("]")
	arr := []byte(sb.String())
	b.SetBytes(int64(len(arr)))
	for b.Loop() {
		ObjectsValid(arr)
	}
}

// FuzzSplitWithObjects checks the split of a list result in one pass
// against SplitValid, then ObjectsValid on the array it names.
func FuzzSplitWithObjects(f *testing.F) {
	for _, s := range []string{
		`{"tools":[{"name":"a"},{"name":"b","x":[1,{"y":"]"}]}],"nextCursor":"c"}`, `{"tools":[]}`, `{"tools":{}}`,
		`{"a":1,"tools":[1]}`, `{"tools":[{"a":1,"a":2}]}`, `{"tools":[],"tools":[]}`, `{}`, `[]`, `{"x":{"tools":[{}]}}`,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		if !Valid(data) {
			return
		}
		ms, list, err := SplitWithObjects(data, "tools")
		oldMs, oldErr := SplitValid(data)
		var oldList *ObjectList
		if oldErr == nil {
			if arr, ok := oldMs.Get("tools"); ok && arr[0] == '[' {
				elems, members, err := ObjectsValid(arr)
				if err != nil {
					oldErr = err
				} else {
					oldList = &ObjectList{elems, members}
				}
			}
		}
		if (err == nil) != (oldErr == nil) {
			t.Fatalf("verdicts differ on %q: one pass %v, two %v", data, err, oldErr)
		}
		if err != nil {
			return // which of two faults is named first may differ
		}
		if fmt.Sprint(ms) != fmt.Sprint(oldMs) {
			t.Fatalf("%q: members %+v, want %+v", data, ms, oldMs)
		}
		if (list == nil) != (oldList == nil) || list != nil && (fmt.Sprint(list.Elems) != fmt.Sprint(oldList.Elems) || fmt.Sprint(list.Members) != fmt.Sprint(oldList.Members)) {
			t.Fatalf("%q: list %+v, want %+v", data, list, oldList)
		}
	})
}
