// Package saltzmq is the ZeroMQ side of Salt's own transport, so that
// unmodified salt-minion processes (3006, on libzmq through pyzmq) connect
// to a brine master with master_port and publish_port pointing at brine's
// ports: a request server in the role of a salt-master's ROUTER on
// ret_port (4506), and a publisher in the role of its PUB on publish_port
// (4505).
//
// Why its own ZMTP: Salt's transport is ZMTP 3 with the NULL mechanism (no
// encryption at this layer: Salt encrypts its payloads itself, which the
// payload codec does, not this package), so the handshake is a greeting and
// one READY command each way; owning it lets brine's gateway peek at a new
// connection, learn that it is a Salt minion, and hand it over on the same
// port as its CURVE agents (see PeekSocketType and Accepted), and gives
// every connection the bounds the gateway has (message size, handshake and
// idle timeouts, caps on connections not yet authenticated) which zmq4's
// sockets do not.
//
// The wire, after the handshake:
//
//	request (REQ → ROUTER): "" (REQ's delimiter), payload
//	reply   (ROUTER → REQ): "" , payload
//	publish (PUB → SUB):    payload, or topic, payload (Salt's zmq_filtering:
//	                        "broadcast" or the sha1 hex of a minion id)
//
// Payloads are opaque here: one msgpack frame each, encrypted or not, is
// the business of the Handler. A SUB's subscriptions arrive as ZMTP 3.0
// messages whose first byte is 1 (subscribe) or 0 (cancel), or as ZMTP 3.1
// SUBSCRIBE and CANCEL commands; a message goes to the subscribers with a
// subscription that is a prefix of its first frame, as libzmq's PUB does.
package saltzmq
