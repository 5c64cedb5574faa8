// Package fnmatch is Salt's fnmatch: Python's fnmatch.fnmatchcase, which Salt
// applies to targets (minion ids, grains, pillar values), event tags
// (reactors, state.event, the bus's subscriptions) and function names
// (sys.list_functions, the jobs runner, publisher ACLs).
//
// It is a package of its own, not part of the event bus where it began,
// because most of its users have nothing to do with events: an execution
// module or a target matcher that needs a glob should not depend on the bus
// to get one. Glob matches one pattern, Set matches many at once, and
// ExprMatcher is Salt's expr_match (string, glob or regular expression).
package fnmatch
