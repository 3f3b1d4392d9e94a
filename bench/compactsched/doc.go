// Package compactsched schedules the store's Pebble compactions: serially at
// checkpoints (Gate), or offloaded, with their CPU metered apart from the job's
// (Offload, Meter).
package compactsched
