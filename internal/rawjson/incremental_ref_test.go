package rawjson

import (
	"reflect"
	"testing"
)

// scanReference is scan as it was before its fast paths (round 3 of
// issue 13), kept to pin the new one: it goes on from s.i as far as b allows. final says that b is all
// there is.
func (s *Incremental) scanReference(b []byte, final bool) {
	i := s.i
	for {
		switch s.state {
		case stDone:
			if i = skipSpace(b, i); i < len(b) {
				s.state = stGivenUp // data after the object
			}
			s.i = i
			return
		case stGivenUp:
			return
		case stString:
			end, more, _ := stringRest(b, i)
			switch {
			case end < 0:
				s.state = stGivenUp
				return
			case more:
				if final {
					s.state = stGivenUp
				}
				s.i = end
				return
			}
			if s.strKey {
				if !s.keyEndedRef(b, s.strStart, end) {
					s.state = stGivenUp
					return
				}
				s.state = stColon
			} else {
				s.valueEndedRef(end)
			}
			i = end
			continue
		}
		// The other states start by skipping whitespace.
		if i = skipSpace(b, i); i >= len(b) {
			if final {
				s.state = stGivenUp
			}
			s.i = i
			return
		}
		c := b[i]
		switch s.state {
		case stTop:
			if c != '{' {
				s.state = stGivenUp
				continue
			}
			s.stack = append(s.stack, true)
			s.state = stObjOpen
			i++
		case stObjOpen, stArrOpen:
			if c == closer(s.state == stObjOpen) {
				i++
				s.closeRef(i)
				continue
			}
			if s.state == stObjOpen {
				s.state = stKey
			} else {
				s.state = stValue
			}
		case stKey:
			if c != '"' {
				s.state = stGivenUp
				continue
			}
			s.strStart, s.strKey, s.state = i, true, stString
			i++
		case stColon:
			if c != ':' {
				s.state = stGivenUp
				continue
			}
			s.state = stValue
			i++
		case stAfter:
			object := s.stack[len(s.stack)-1]
			switch c {
			case closer(object):
				i++
				s.closeRef(i)
			case ',':
				i++
				if object {
					s.state = stKey
				} else {
					s.state = stValue
				}
			default:
				s.state = stGivenUp
			}
		case stValue:
			s.valueStarts(b, i)
			switch {
			case c == '"':
				s.strStart, s.strKey, s.state = i, false, stString
				i++
			case c == '{' || c == '[':
				if len(s.stack)+1 > maxDepth {
					s.state = stGivenUp
					continue
				}
				s.stack = append(s.stack, c == '{')
				if len(s.stack) == 2 && c == '{' && s.nested == len(s.top) {
					s.inNest = true
				}
				s.state = stArrOpen
				if c == '{' {
					s.state = stObjOpen
				}
				i++
			default:
				end := scalarEnd(b, i)
				if end < 0 || end == len(b) && !final {
					// Cut by the end of what has arrived, perhaps: a
					// number or a literal resumes from its start.
					if final || len(b)-i > maxPending || end < 0 && !scalarPrefix(b[i:]) {
						s.state = stGivenUp
						continue
					}
					s.i = i
					return
				}
				i = end
				s.valueEndedRef(end)
			}
		}
	}
}

// valueEnded records the member whose value ends at end, if it is one of
// the split objects', and goes on after it.
func (s *Incremental) valueEndedRef(end int) {
	if s.inNest {
		s.objs.valueEnded(end, len(s.stack))
	}
	switch {
	case len(s.stack) == 1:
		s.key1.valEnd = end
		s.top = append(s.top, s.key1)
	case len(s.stack) == 2 && s.inNest:
		s.key2.valEnd = end
		s.inner = append(s.inner, s.key2)
	}
	s.state = stAfter
}

// keyEnded notes the key b[start:end]; false gives up (an escaped
// top-level key).
func (s *Incremental) keyEndedRef(b []byte, start, end int) bool {
	lit := b[start:end]
	if len(s.stack) == 1 {
		s.key1.keyStart, s.key1.keyEnd = start, end
		return indexBackslash(lit) < 0
	}
	if string(lit) == `"uri"` || indexBackslash(lit) >= 0 {
		s.uriKey = true
	}
	if len(s.stack) == 2 && s.inNest {
		s.key2.keyStart, s.key2.keyEnd = start, end
	}
	if s.inNest {
		s.objs.keyEnded(start, end, len(s.stack))
	}
	return true
}

// close pops the container that ended just before end.
func (s *Incremental) closeRef(end int) {
	s.stack = s.stack[:len(s.stack)-1]
	if len(s.stack) == 0 {
		s.objEnd = end
		s.state = stDone
		return
	}
	if len(s.stack) == 1 {
		s.inNest = false
	}
	s.valueEndedRef(end)
}

// FuzzIncrementalAsReference feeds the scanner and scanReference the same
// pieces: after each, both stand at the same place in the same state, and
// finished, they split the message, its nested object and its list's
// items alike.
func FuzzIncrementalAsReference(f *testing.F) {
	for _, s := range scanSeeds {
		f.Add([]byte(s), []byte{1, 2, 3})
		f.Add([]byte(s), []byte{7})
	}
	f.Add(toolListAnswer(3), []byte{1, 5, 9, 40, 200})
	f.Add([]byte(`{"result":{"tools":[{"n\u0061me":"a","uri":"x"},{"a" :1}]}, "id" : 1}`), []byte{2, 11, 3})
	f.Add([]byte(`{"result":{"a":{"u\u0072i":1}}}`), []byte{20})
	f.Add([]byte(`{"a\"b":1}`), []byte{3})
	f.Fuzz(func(t *testing.T, data, cuts []byte) {
		var fast, ref Incremental
		fast.Reset()
		ref.Reset()
		n := 0
		step := func(final bool) {
			fast.scan(data[:n], final)
			ref.scanReference(data[:n], final)
			if fast.state != ref.state || fast.state != stGivenUp && fast.i != ref.i || len(fast.stack) != len(ref.stack) {
				t.Fatalf("%q cut at %d: scan at %d in state %d (depth %d), reference at %d in state %d (depth %d)",
					data, n, fast.i, fast.state, len(fast.stack), ref.i, ref.state, len(ref.stack))
			}
		}
		for _, c := range cuts {
			n += max(int(c), 1)
			if n >= len(data) {
				break
			}
			step(false)
		}
		n = len(data)
		step(true)
		if fast.state != stDone {
			return
		}
		if !reflect.DeepEqual(fast.top, ref.top) || !reflect.DeepEqual(fast.inner, ref.inner) || fast.nested != ref.nested || fast.uriKey != ref.uriKey || fast.objEnd != ref.objEnd {
			t.Fatalf("%q: split %v %v %d %v, reference %v %v %d %v", data, fast.top, fast.inner, fast.nested, fast.uriKey, ref.top, ref.inner, ref.nested, ref.uriKey)
		}
		if !reflect.DeepEqual(fast.objs, ref.objs) {
			t.Fatalf("%q: items %+v, reference %+v", data, fast.objs, ref.objs)
		}
	})
}
