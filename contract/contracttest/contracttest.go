// Package contracttest adds a test dimension to the contract's table, as README's
// "Adding a dimension" says: one table entry, with no engine code behind it.
package contracttest

import (
	"fmt"
	"testing"

	"github.com/backfill-bench/backfill-bench/contract"
)

// Colour adds the dimension colour (red, the default, or blue) for the rest of t.
func Colour(t testing.TB) {
	t.Helper()
	remove, err := contract.NewDimension(contract.Dimension{
		Name: "colour", Default: "red", Help: "test colours: red (the default) or blue",
		Parse: func(v string) (string, error) {
			if v != "red" && v != "blue" {
				return "", fmt.Errorf("colour %q: want red or blue", v)
			}
			return v, nil
		},
	})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(remove)
}
