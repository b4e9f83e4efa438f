package proxy_test

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"strings"
	"testing"
	"time"

	"github.com/mcpgate/mcpgate/jsonrpc"
	"github.com/mcpgate/mcpgate/proxy"
)

// modernLines is a stdio client of g speaking the 2026-07-28 era line by
// line: what it sends is written as given, and every line it gets arrives
// on the channel.
func modernLines(t *testing.T, g *proxy.Gateway) (send func(string), got <-chan string) {
	t.Helper()
	toGateway, fromClient := io.Pipe()
	toClient, fromGateway := io.Pipe()
	go g.Serve(context.Background(), jsonrpc.NewLineStream(toGateway, fromGateway, fromGateway, 0), proxy.ServeOptions{})
	t.Cleanup(func() { fromClient.Close(); toClient.Close() })
	lines := make(chan string, 64)
	go func() {
		defer close(lines)
		sc := bufio.NewScanner(toClient)
		sc.Buffer(nil, 1<<20)
		for sc.Scan() {
			lines <- sc.Text()
		}
	}()
	return func(msg string) {
		if _, err := io.WriteString(fromClient, msg+"\n"); err != nil {
			t.Fatal(err)
		}
	}, lines
}

const envelope = `"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{},"io.modelcontextprotocol/clientInfo":{"name":"t","version":"1"}}`

func listenRequest(id int) string {
	return fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"method":"subscriptions/listen","params":{"notifications":{"toolsListChanged":true},%s}}`, id, envelope)
}

// nextLine is the next message the client gets, within a generous limit.
func nextLine(t *testing.T, got <-chan string) string {
	t.Helper()
	select {
	case line, ok := <-got:
		if !ok {
			t.Fatal("the gateway closed the client's stream")
		}
		return line
	case <-time.After(time.Minute):
		t.Fatal("no message from the gateway in a minute")
	}
	return ""
}

// One client cannot take every listen mcpgate keeps: past its share (a
// quarter) it is refused, saying which limit and what to do, and another
// client still gets its own.
func TestListensPerClientShare(t *testing.T) {
	g := startGreeter(t, "")
	const share = 1024 / 4
	send, got := modernLines(t, g)
	for id := 1; id <= share+1; id++ {
		send(listenRequest(id))
	}
	// They run at once: which one is refused is not known, only that one is.
	var acks, refused int
	for acks+refused < share+1 {
		line := nextLine(t, got)
		if strings.Contains(line, "notifications/subscriptions/acknowledged") {
			acks++
			continue
		}
		var answer struct{ Error *struct{ Message string } }
		json.Unmarshal([]byte(line), &answer)
		if answer.Error == nil || !strings.Contains(answer.Error.Message, "the most mcpgate keeps for one client") {
			t.Fatalf("a listen was answered %s; want acknowledged, or refused naming the per-client limit", line)
		}
		refused++
	}
	if refused != 1 {
		t.Fatalf("of %d listens of one client, %d were acknowledged; want %d", share+1, acks, share)
	}

	other, otherGot := modernLines(t, g)
	other(listenRequest(1))
	if line := nextLine(t, otherGot); !strings.Contains(line, "notifications/subscriptions/acknowledged") {
		t.Fatalf("another client's listen got %s; want it acknowledged", line)
	}
}
