package jsonrpc_test

import (
	"context"
	"encoding/json"
	"fmt"
	"io"

	"github.com/mcpgate/mcpgate/jsonrpc"
)

// Two connections over a pair of pipes: one serves "add", the other calls
// it. A Conn is symmetric: either side can both call and serve.
func Example() {
	aIn, bOut := io.Pipe()
	bIn, aOut := io.Pipe()
	server := jsonrpc.NewConn(jsonrpc.NewLineStream(aIn, aOut, aOut, 0), jsonrpc.Options{
		Handler: jsonrpc.HandlerFunc(func(ctx context.Context, msg *jsonrpc.Message) (json.RawMessage, error) {
			if msg.Method != "add" {
				return nil, jsonrpc.Errorf(jsonrpc.ErrMethodNotFound, "no method %q", msg.Method)
			}
			var p [2]int
			if err := json.Unmarshal(msg.Params, &p); err != nil {
				return nil, jsonrpc.Errorf(jsonrpc.ErrInvalidParams, "want [a, b]: %v", err)
			}
			return json.Marshal(p[0] + p[1])
		}),
	}).Start()
	defer server.Close()
	client := jsonrpc.NewConn(jsonrpc.NewLineStream(bIn, bOut, bOut, 0), jsonrpc.Options{}).Start()
	defer client.Close()

	sum, err := client.Call(context.Background(), "add", json.RawMessage(`[2,3]`))
	fmt.Println(string(sum), err)
	_, err = client.Call(context.Background(), "mul", json.RawMessage(`[2,3]`))
	fmt.Println(err)
	// Output:
	// 5 <nil>
	// no method "mul"
}
