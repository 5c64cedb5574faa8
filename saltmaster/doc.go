// Package saltmaster is the master's side of Salt's own transport, so that
// unmodified salt-minions (3006 and later) are served by a brine master
// beside brine's agents: the _auth handshake and its session key, the
// AESFuncs a minion calls on the request port (_return, _minion_event,
// _pillar, _mine, the file server ...) and the jobs published to it on
// the publish port.
//
// It decides nothing itself. Each minion is a wire.Conn of the master's
// agent-protocol seam, and every request is handed to the same table of
// agent methods brine's CURVE agents use: who a minion is, what its key
// allows, where its events and returns go, which files and pillar it may
// read — all of it is the master's, for both kinds of agent. What is left
// here is translation: Salt's loads into the agent protocol's bodies and
// back, and the parts of Salt's protocol the agent protocol does not
// have (the shared session key and its rotation, publishing one job to
// many minions at once, find_job as a job of its own).
//
// Salt's protocol gives every accepted minion the same session key, so
// a load's "id" is only a claim. A claim is believed only with proof:
// the minion's "tok" (its RSA signature of "salt", which only its key
// makes) on every load that carries one, as Salt checks it; a pillar is
// encrypted to the claimed id's key, so only that minion reads it; and a
// load without a tok (_return, _pillar's grains) is taken only from the
// address the id last signed in from (docs/coming-from-salt.md, "moving
// a fleet", says what that does and does not prevent).
package saltmaster
