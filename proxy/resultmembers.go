package proxy

import (
	"errors"

	"github.com/mcpgate/mcpgate/internal/rawjson"
	"github.com/mcpgate/mcpgate/jsonrpc"
)

// repeatedMember is the error for a server's result that could not be split
// because it repeats a member (nil for any other failure, whose result
// passes as before): mcpgate and the client would each read a different
// copy, so the exchange is refused rather than have two meanings.
func (s *session) repeatedMember(err error, rec *auditRecord) error {
	var dup *rawjson.DuplicateError
	if !errors.As(err, &dup) || rec.up == nil {
		return nil
	}
	s.g.log.Warn("upstream sent a result that repeats a member: refused", "server", rec.Server, "method", rec.Method, "member", dup.Key)
	return jsonrpc.Errorf(jsonrpc.ErrInternal, "server %q sent a result with the member %s twice; mcpgate cannot tell which one the client would read: the server is at fault", rec.Server, dup.Key)
}
