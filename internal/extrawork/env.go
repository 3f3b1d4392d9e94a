package extrawork

// In a test build, these variables set the work, in xorshift steps, of each place.
const (
	EnvLoad   = "BACKFILL_EXTRA_LOAD"
	EnvVerify = "BACKFILL_EXTRA_VERIFY"
	EnvRow    = "BACKFILL_EXTRA_ROW"
)
