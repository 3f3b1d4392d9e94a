// Package contract is what the bench binary and the harness agree on: cell names, the
// matrix, the binary's flags, units with their directions, the trace schema and the
// results files. It links no storage engine, so the harness can read results cheaply.
package contract
