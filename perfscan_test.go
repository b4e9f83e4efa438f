package main

import (
	"bytes"
	"errors"
	"fmt"
	"strconv"
	"testing"
)

// perfReply is what the load generator reads of a message.
type perfReply struct {
	id        int64
	hasID     bool   // an integer id at the top level
	isRequest bool   // it has a method: a request or notification, not an answer
	isResult  bool   // it has a result
	errorText []byte // the error member, cut short, when it has one
	bad       string // why it is not a message at all
}

func (r perfReply) err() error {
	switch {
	case r.bad != "":
		return errors.New("perf client: unreadable answer: " + r.bad)
	case r.errorText != nil:
		return fmt.Errorf("perf client: answered with an error: %s", r.errorText)
	case !r.isResult:
		return errors.New("perf client: an answer with neither result nor error")
	}
	return nil
}

// scanReply reads a message's top-level members up to what it needs: the
// id and which of result, error or method it has. It stops there, so a
// large result after the id is never walked; values it passes over are
// skipped, strings by searching for their closing quote.
func scanReply(msg []byte) perfReply {
	var r perfReply
	i := skipSpace(msg, 0)
	if i >= len(msg) || msg[i] != '{' {
		r.bad = "not a JSON object"
		return r
	}
	i++
	for {
		i = skipSpace(msg, i)
		if i < len(msg) && msg[i] == '}' {
			return r
		}
		if i >= len(msg) || msg[i] != '"' {
			r.bad = "a member without a key"
			return r
		}
		end := skipString(msg, i)
		if end < 0 {
			r.bad = "an unterminated key"
			return r
		}
		key := string(msg[i+1 : end-1])
		i = skipSpace(msg, end)
		if i >= len(msg) || msg[i] != ':' {
			r.bad = "a key without a value"
			return r
		}
		i = skipSpace(msg, i+1)
		switch key {
		case "method":
			r.isRequest = true
		case "result":
			r.isResult = true
		case "error":
			r.errorText = msg[i:min(len(msg), i+300)]
		}
		if r.hasID && (r.isResult || r.errorText != nil || r.isRequest) {
			return r // what follows is not ours to read
		}
		end = skipValue(msg, i)
		if end < 0 {
			r.bad = "a value cut short"
			return r
		}
		if key == "id" {
			id, err := strconv.ParseInt(string(msg[i:end]), 10, 64)
			r.id, r.hasID = id, err == nil
			if r.hasID && (r.isResult || r.errorText != nil || r.isRequest) {
				return r
			}
		}
		i = skipSpace(msg, end)
		if i < len(msg) && msg[i] == ',' {
			i++
		}
	}
}

func skipSpace(msg []byte, i int) int {
	for i < len(msg) && (msg[i] == ' ' || msg[i] == '\t' || msg[i] == '\n' || msg[i] == '\r') {
		i++
	}
	return i
}

// skipString returns the index just past the string that opens at i, or -1.
func skipString(msg []byte, i int) int {
	for j := i + 1; ; {
		k := bytes.IndexByte(msg[j:], '"')
		if k < 0 {
			return -1
		}
		j += k
		backslashes := 0
		for b := j - 1; b > i && msg[b] == '\\'; b-- {
			backslashes++
		}
		j++
		if backslashes%2 == 0 {
			return j
		}
	}
}

// skipValue returns the index just past the value that starts at i, or -1.
func skipValue(msg []byte, i int) int {
	if i >= len(msg) {
		return -1
	}
	switch msg[i] {
	case '"':
		return skipString(msg, i)
	case '{', '[':
		depth := 0
		for i < len(msg) {
			switch msg[i] {
			case '"':
				if i = skipString(msg, i); i < 0 {
					return -1
				}
				continue
			case '{', '[':
				depth++
			case '}', ']':
				if depth--; depth == 0 {
					return i + 1
				}
			}
			i++
		}
		return -1
	}
	for j := i; j < len(msg); j++ {
		switch msg[j] {
		case ',', '}', ']', ' ', '\t', '\n', '\r':
			return j
		}
	}
	return -1
}

func TestScanReply(t *testing.T) {
	for _, c := range []struct {
		msg  string
		want perfReply
	}{
		{`{"jsonrpc":"2.0","id":7,"result":{"content":[]}}`, perfReply{id: 7, hasID: true, isResult: true}},
		// The result before the id, with strings that look like members.
		{`{"result": {"text": "a \"id\": 9, } ] \\", "list": [1, {"id": 8}]}, "id" : 12 , "jsonrpc":"2.0"}`, perfReply{id: 12, hasID: true, isResult: true}},
		{`{"jsonrpc":"2.0","id":3,"error":{"code":-32602,"message":"no"}}`, perfReply{id: 3, hasID: true, errorText: []byte(`{"code":-32602,"message":"no"}}`)}},
		{`{"jsonrpc":"2.0","method":"notifications/progress","params":{"id":1}}`, perfReply{isRequest: true}},
		{`{"jsonrpc":"2.0","id":4,"method":"roots/list"}`, perfReply{id: 4, hasID: true, isRequest: true}},
		{`{"jsonrpc":"2.0","id":"s1","result":{}}`, perfReply{isResult: true}}, // not one of ours
		{`{"id":5}`, perfReply{id: 5, hasID: true}},
		{`[{"id":1}]`, perfReply{bad: "not a JSON object"}},
		{`{"id":1,"result":"cut`, perfReply{id: 1, hasID: true, isResult: true}}, // read no further than needed
		{`{"result":"cut`, perfReply{isResult: true, bad: "a value cut short"}},
	} {
		got := scanReply([]byte(c.msg))
		if fmt.Sprint(got) != fmt.Sprint(c.want) {
			t.Errorf("scanReply(%s)\n got %+v\nwant %+v", c.msg, got, c.want)
		}
	}
	if err := scanReply([]byte(`{"id":5}`)).err(); err == nil {
		t.Error("an answer with neither result nor error passed")
	}
}
