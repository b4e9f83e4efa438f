package proxy

import (
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"strings"
	"time"
)

// The requestState mcpgate gives a modern client for an exchange (see
// bridgeask.go) is signed with a key made at start, so that a client can
// neither forge one nor change what it says: "mcpgate1." + the state in
// base64url + "." + its HMAC-SHA256. It names the replica that made it
// (an exchange lives in one process), the exchange and its round, and the
// request it continues; it expires with the exchange.

const statePrefix = "mcpgate1."

// exchangeState is what a state says.
type exchangeState struct {
	Replica  string `json:"r"`
	Exchange string `json:"x"`
	Round    int    `json:"n"`
	Server   string `json:"s"`
	Method   string `json:"m"`
	Name     string `json:"t"`
	Expires  int64  `json:"e"` // unix seconds
}

// newStateKey makes the key states are signed with, and the replica's id.
func newStateKey() (key [32]byte, replica string) {
	rand.Read(key[:])
	var id [8]byte
	rand.Read(id[:])
	return key, base64.RawURLEncoding.EncodeToString(id[:])
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

// checkState verifies a state and returns what it says.
func (g *Gateway) checkState(state string) (exchangeState, error) {
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
		return st, invalidState("it was issued by another mcpgate process (the call it continues is held there)")
	}
	if time.Now().Unix() > st.Expires {
		return st, invalidState("it has expired")
	}
	return st, nil
}
