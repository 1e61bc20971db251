package offsets

// Event codes of watch --commit-group: the stream's acked next offsets
// committed to a consumer group after each batch. The store stays the
// source of truth; these report how the group follows it. They fit the
// events pane's code column (13 characters).
const (
	// CodeGroupCommit: the group holds the stream's acked offsets (the
	// first commit, or the first after failures).
	CodeGroupCommit = "group-commit"
	// CodeGroupCommitFailed: a commit failed; it is tried again with the
	// positions acked by then. The batch stays acked.
	CodeGroupCommitFailed = "group-retry"
	// CodeGroupCommitStopped: the group has live members, or the user
	// lacks a permission the commits need; kbatch commits no more to it
	// while this stream runs.
	CodeGroupCommitStopped = "group-stopped"
)
