package proxy

import "testing"

func TestCursorRoundTrip(t *testing.T) {
	for _, tt := range []struct {
		id     uint64
		offset int
	}{{1, 0}, {1, 2}, {18446744073709551615, 2147483647}} {
		c := encodeCursor(tt.id, tt.offset)
		id, off, err := decodeCursor(c)
		if err != nil || id != tt.id || off != tt.offset {
			t.Errorf("decodeCursor(encodeCursor(%d, %d)) = %d, %d, %v", tt.id, tt.offset, id, off, err)
		}
	}
	for _, bad := range []string{"", "x", "djE6MQ", "djI6MToy", "djE6LTE6Mg", "djE6MTotMg", "!!!!"} {
		if _, _, err := decodeCursor(bad); err == nil {
			t.Errorf("decodeCursor(%q) accepted a cursor mcpgate never made", bad)
		}
	}
}

func FuzzDecodeCursor(f *testing.F) {
	f.Add(encodeCursor(7, 20))
	f.Add("djE6OTk6MA")
	f.Add("not-a-cursor")
	f.Fuzz(func(t *testing.T, c string) {
		id, off, err := decodeCursor(c)
		if err != nil {
			return
		}
		if off < 0 {
			t.Fatalf("negative offset %d from %q", off, c)
		}
		if again := encodeCursor(id, off); again != c {
			// Different spellings of one cursor are harmless, but they must
			// decode to the same place.
			if id2, off2, _ := decodeCursor(again); id2 != id || off2 != off {
				t.Fatalf("%q and %q decode differently", c, again)
			}
		}
	})
}
