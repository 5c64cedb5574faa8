package file

import filemod "github.com/brinehq/brine/modules/file"

// The file states' diffs are the file module's (Python's difflib, as
// Salt's get_diff uses it), so that a state and the execution function
// it stands for show the same diff.
var (
	unifiedDiff = filemod.UnifiedDiff
	getDiff     = filemod.GetDiff
	splitLines  = filemod.SplitLines
)
