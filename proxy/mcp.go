package proxy

import (
	"encoding/json"
	"slices"

	"github.com/mcpgate/mcpgate/internal/rawjson"
)

// Protocol versions of the legacy (initialize-based) era, oldest first.
const (
	version20241105 = "2024-11-05"
	version20250326 = "2025-03-26"
	version20250618 = "2025-06-18"
	version20251125 = "2025-11-25"
	// latestVersion is what mcpgate asks upstreams for and offers clients
	// that ask for a version it does not know.
	latestVersion = version20251125
)

var supportedVersions = []string{version20241105, version20250326, version20250618, version20251125}

// SupportsVersion reports whether mcpgate speaks MCP protocol version v
// (as a transport must check the MCP-Protocol-Version header).
func SupportsVersion(v string) bool { return slices.Contains(supportedVersions, v) }

// ProtocolVersions are the MCP protocol versions mcpgate speaks, oldest
// first.
func ProtocolVersions() []string { return slices.Clone(supportedVersions) }

// negotiateVersion is the version a session runs: the one the client asked
// for if mcpgate speaks it, else the newest mcpgate speaks (the client then
// decides whether it can go on).
func negotiateVersion(requested string) string {
	if SupportsVersion(requested) {
		return requested
	}
	return latestVersion
}

// MCP method names.
const (
	methodInitialize          = "initialize"
	methodPing                = "ping"
	methodDiscover            = "server/discover"      // 2026-07-28
	methodListen              = "subscriptions/listen" // 2026-07-28
	notifyAcknowledged        = "notifications/subscriptions/acknowledged"
	methodToolsList           = "tools/list"
	methodToolsCall           = "tools/call"
	methodPromptsList         = "prompts/list"
	methodPromptsGet          = "prompts/get"
	methodResourcesList       = "resources/list"
	methodTemplatesList       = "resources/templates/list"
	methodResourcesRead       = "resources/read"
	methodComplete            = "completion/complete"
	methodSetLevel            = "logging/setLevel"
	notifyInitialized         = "notifications/initialized"
	notifyCancelled           = "notifications/cancelled"
	notifyProgress            = "notifications/progress"
	notifyMessage             = "notifications/message"
	notifyToolsChanged        = "notifications/tools/list_changed"
	notifyPromptsChanged      = "notifications/prompts/list_changed"
	notifyResourcesChanged    = "notifications/resources/list_changed"
	methodRootsList           = "roots/list"
	methodSamplingCreate      = "sampling/createMessage"
	methodElicitationCreate   = "elicitation/create"
	methodSubscribe           = "resources/subscribe"
	methodUnsubscribe         = "resources/unsubscribe"
	notifyElicitationComplete = "notifications/elicitation/complete"
	notifyResourceUpdated     = "notifications/resources/updated"
	notifyRootsChanged        = "notifications/roots/list_changed"
)

// metaUnavailable is the _meta key of a list result that names the servers
// missing from it.
const metaUnavailable = "mcpgate/unavailable"

// initializeResult is the part of an upstream's initialize answer the
// gateway reads. Capabilities stay raw per key so unknown ones survive.
type initializeResult struct {
	ProtocolVersion string                     `json:"protocolVersion"`
	Capabilities    map[string]json.RawMessage `json:"capabilities"`
	ServerInfo      implementation             `json:"serverInfo"`
	Instructions    string                     `json:"instructions,omitempty"`
}

type implementation struct {
	Name    string `json:"name"`
	Title   string `json:"title,omitempty"`
	Version string `json:"version"`
}

// listCapability is the shape of the tools, prompts and resources
// capabilities.
type listCapability struct {
	ListChanged bool `json:"listChanged,omitempty"`
	Subscribe   bool `json:"subscribe,omitempty"`
}

func mustJSON(v any) json.RawMessage {
	b, err := json.Marshal(v)
	if err != nil {
		panic(err) // only called on values built here
	}
	return b
}

func quote(s string) json.RawMessage { return rawjson.AppendString(nil, s) }
