//go:build widestate

package backfill

import "strings"

// statePadding makes every state row 66 bytes wider in this test build (a string
// column of 64 bytes, its kind and its length): a persistence regression made on
// purpose.
var statePadding = strings.Repeat("w", 64)
