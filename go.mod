module github.com/mcpgate/mcpgate

go 1.24

require github.com/rogpeppe/go-internal v1.14.1 // indirect
