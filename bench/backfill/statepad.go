//go:build !widestate

package backfill

// statePadding is appended to every state row as one more column in the widestate
// test build only: the persistence regression made on purpose that the metrics of
// persistence must catch (harness's TestWiderStateIsARegression). Empty here.
const statePadding = ""
