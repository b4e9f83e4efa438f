package proxy

import (
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"strings"
	"time"

	"github.com/mcpgate/mcpgate/config"
)

// The requestState mcpgate gives a modern client for an exchange (see
// bridgeask.go) is signed, so that a client can neither forge one nor
// change what it says: "mcpgate1." + the state in base64url + "." + its
// HMAC-SHA256. It names the process that made it (an exchange lives in
// one), the exchange and its round, and the request it continues; it
// expires with the exchange.
//
// Alone, mcpgate signs with a key made at start. Replicas behind a load
// balancer share cluster.key, so that whichever replica a client's retry
// reaches can check the state; only the one that issued it holds the
// exchange. Another answers that the state cannot be continued, and the
// client makes its request again from the start (as after an expiry):
// never a guess, and never another exchange's answers.

const statePrefix = "mcpgate1."

// exchangeState is what a state says.
type exchangeState struct {
	Replica  string `json:"r"`
	Exchange string `json:"x"`
	Round    int    `json:"n"`
	Server   string `json:"s"`
	Method   string `json:"m"`
	Name     string `json:"t"`
	Expires  int64  `json:"e"`           // unix seconds
	Client   string `json:"c,omitempty"` // clientTag of the client it was issued to
}

// clientTag names a client in a state without naming its credentials
// (the state is the client's to read): a keyed hash, which replicas
// sharing cluster.key compute alike.
func (g *Gateway) clientTag(client string) string {
	if client == "" {
		return ""
	}
	mac := hmac.New(sha256.New, g.stateKey[:])
	mac.Write([]byte("client\x00" + client))
	return base64.RawURLEncoding.EncodeToString(mac.Sum(nil)[:12])
}

// stateKeyLabel derives the states' key from cluster.key, so that the
// shared secret could sign something else one day without the two mixing.
const stateKeyLabel = "mcpgate requestState v1"

// newStateKey makes the key states are signed with, and the id of this
// process: the replica's name, if it has one, and a random part, since a
// replica restarted under its name holds none of the exchanges of before.
func newStateKey(c config.Cluster) (key [32]byte, process string) {
	var id [8]byte
	rand.Read(id[:])
	process = base64.RawURLEncoding.EncodeToString(id[:])
	if c.Key == nil {
		rand.Read(key[:])
		return key, process
	}
	mac := hmac.New(sha256.New, c.Key)
	mac.Write([]byte(stateKeyLabel))
	copy(key[:], mac.Sum(nil))
	return key, c.Replica + "/" + process
}

func (g *Gateway) signState(st exchangeState) string {
	st.Replica = g.replica
	payload := base64.RawURLEncoding.EncodeToString(mustJSON(st))
	mac := hmac.New(sha256.New, g.stateKey[:])
	mac.Write([]byte(payload))
	return statePrefix + payload + "." + base64.RawURLEncoding.EncodeToString(mac.Sum(nil))
}

// isOurState reports whether a requestState is in mcpgate's form (it may
// still fail the check).
func isOurState(state string) bool { return strings.HasPrefix(state, statePrefix) }

// checkState verifies a state that client presents, and returns what it
// says.
func (g *Gateway) checkState(state, client string) (exchangeState, error) {
	var st exchangeState
	payload, sig, ok := strings.Cut(strings.TrimPrefix(state, statePrefix), ".")
	if !ok || !isOurState(state) {
		return st, invalidState("it is not one mcpgate issued")
	}
	got, err := base64.RawURLEncoding.DecodeString(sig)
	mac := hmac.New(sha256.New, g.stateKey[:])
	mac.Write([]byte(payload))
	if err != nil || !hmac.Equal(got, mac.Sum(nil)) {
		return st, invalidState("its signature does not check")
	}
	raw, err := base64.RawURLEncoding.DecodeString(payload)
	if err != nil || json.Unmarshal(raw, &st) != nil {
		return st, invalidState("it is not one mcpgate issued")
	}
	if st.Replica != g.replica {
		return st, invalidState(g.elsewhere(st.Replica))
	}
	if time.Now().Unix() > st.Expires {
		return st, invalidState("it has expired")
	}
	if !hmac.Equal([]byte(st.Client), []byte(g.clientTag(client))) {
		return st, invalidState("it was issued to another client")
	}
	return st, nil
}

// elsewhere says which process holds the exchange a state names, as far
// as the client may know: a replica's name is no secret (it routes).
func (g *Gateway) elsewhere(process string) string {
	name, _, named := strings.Cut(process, "/")
	ours, _, _ := strings.Cut(g.replica, "/")
	switch {
	case !named:
		return "it was issued by another mcpgate process (the call it continues is held there)"
	case name == ours:
		return "it was issued before this replica restarted (the call it continues ended then)"
	}
	return fmt.Sprintf("it was issued by replica %q, which holds the call it continues; this is another replica", name)
}
